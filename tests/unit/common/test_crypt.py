"""Encryption of the caller's token kept in the database."""

import pytest

from heat_lite import conf
from heat_lite.common import crypt

CONF = conf.CONF
KEY = "an encryption key of 32 chars..."


@pytest.fixture(autouse=True)
def _key():
    CONF.set_override("auth_encryption_key", KEY)
    yield
    CONF.clear_override("auth_encryption_key")


def test_round_trip_hides_the_text():
    token = "gAAAAABtoken-of-the-caller"
    secret = crypt.encrypt(token)
    assert token not in secret
    assert crypt.encrypt(token) != secret  # a fresh IV every time
    assert crypt.decrypt(secret) == token


def test_every_engine_with_the_same_key_reads_it():
    secret = crypt.encrypt("tok")
    crypt._fernet.cache_clear()
    assert crypt.decrypt(secret) == "tok"


def test_another_key_or_an_altered_value_is_unreadable():
    secret = crypt.encrypt("tok")
    CONF.set_override("auth_encryption_key", KEY.upper())
    with pytest.raises(crypt.Unreadable):
        crypt.decrypt(secret)
    CONF.set_override("auth_encryption_key", KEY)
    altered = secret[:-6] + ("A" if secret[-6] != "A" else "B") + secret[-5:]
    with pytest.raises(crypt.Unreadable):
        crypt.decrypt(altered)


def test_short_or_missing_key():
    CONF.set_override("auth_encryption_key", "short")
    with pytest.raises(crypt.WeakKey, match="at least 32"):
        crypt.check_key()
    with pytest.raises(crypt.WeakKey):
        crypt.encrypt("tok")
    CONF.set_override("auth_encryption_key", None)
    assert not crypt.enabled()
    crypt.check_key()  # unset is allowed: nothing is kept
    with pytest.raises(crypt.WeakKey):
        crypt.encrypt("tok")
