"""Encryption of the secrets the engine keeps in the database.

Fernet (AES-128-CBC with an HMAC-SHA256, from ``cryptography``) under a
key derived by HKDF-SHA256 from ``[DEFAULT] auth_encryption_key``. Every
engine process configured with the same option derives the same key, so
a value encrypted by the engine that started an operation can be read by
whichever worker runs a node of it. Without the option nothing is kept
(``enabled()`` is False): the callers must not call ``encrypt``.
"""

import base64
import functools

from cryptography import fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf import hkdf

from heat_lite import conf
from heat_lite.common import exception

CONF = conf.CONF
MIN_KEY_LENGTH = 32
# Binds the derived key to this use of the option.
_HKDF_INFO = b"heat_lite traversal caller token v1"


class WeakKey(exception.HeatLiteException):
    msg_fmt = (
        "[DEFAULT] auth_encryption_key must have at least "
        "%(length)d characters"
    )


class Unreadable(exception.HeatLiteException):
    msg_fmt = (
        "An encrypted value cannot be read with this "
        "auth_encryption_key (is it the same on every engine?)"
    )


def enabled():
    """True when ``auth_encryption_key`` is set."""
    return bool(CONF.auth_encryption_key)


def check_key():
    """Fail at start-up rather than at the first operation.

    :raises WeakKey: if the key is set and shorter than MIN_KEY_LENGTH.
    """
    key = CONF.auth_encryption_key
    if key and len(key) < MIN_KEY_LENGTH:
        raise WeakKey(length=MIN_KEY_LENGTH)


@functools.lru_cache(maxsize=2)
def _fernet(key):
    derived = hkdf.HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO
    ).derive(key.encode())
    return fernet.Fernet(base64.urlsafe_b64encode(derived))


def _current():
    check_key()
    if not enabled():
        raise WeakKey(length=MIN_KEY_LENGTH)
    return _fernet(CONF.auth_encryption_key)


def encrypt(text):
    """``text`` encrypted and authenticated, as ASCII.

    :raises WeakKey: if the key is unset or too short.
    """
    return _current().encrypt(text.encode()).decode("ascii")


def decrypt(token):
    """The text ``encrypt`` gave ``token`` for.

    :raises Unreadable: if it was encrypted under another key or altered.
    :raises WeakKey: if the key is unset or too short.
    """
    try:
        return _current().decrypt(token.encode("ascii")).decode()
    except fernet.InvalidToken:
        raise Unreadable() from None
