"""The trust a stack acts through: when one is made, how it is kept.

Creating and deleting real trusts runs against the test cloud's Keystone
in tests/functional/test_cloud_trusts.py.
"""

import logging

import pytest
from keystoneauth1 import exceptions as ks_exc

from heat_lite import conf
from heat_lite.common import context, crypt
from heat_lite.engine import trusts

CONF = conf.CONF
KEY = "unit-test-encryption-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def _reset():
    yield
    CONF.clear_override("auth_strategy", group="api")
    CONF.clear_override("auth_type", group="trustee")
    CONF.clear_override("auth_encryption_key")


def _ctxt(token="user-token"):
    return context.RequestContext(
        user_id="u",
        project_id="p",
        roles=["member"],
        auth_token=token,
        overwrite=False,
    )


def test_no_trust_in_noauth_mode_or_without_a_trustee():
    CONF.set_override("auth_type", "password", group="trustee")
    assert not trusts.enabled()
    assert trusts.create(_ctxt()) is None
    CONF.set_override("auth_strategy", "keystone", group="api")
    CONF.clear_override("auth_type", group="trustee")
    assert not trusts.enabled()
    assert trusts.create(_ctxt()) is None
    CONF.set_override("auth_type", "password", group="trustee")
    assert trusts.enabled()
    # A context without a token (engine-internal work) makes none.
    assert trusts.create(_ctxt(token=None)) is None


def test_kept_encrypted_when_a_key_is_set():
    assert trusts._store("abc123") == "abc123"
    assert trusts.read("abc123") == "abc123"
    CONF.set_override("auth_encryption_key", KEY)
    stored = trusts._store("abc123")
    assert "abc123" not in stored
    assert trusts.read(stored) == "abc123"
    assert trusts.read(None) is None
    CONF.set_override("auth_encryption_key", KEY[::-1])
    with pytest.raises(crypt.Unreadable):
        trusts.read(stored)
    # The engine's lookup logs that, without the trust, and acts as none.
    assert trusts.for_stack("s", stored) is None


def test_deleting_no_trust_asks_nothing():
    trusts.delete(None)  # no [trustee], no Keystone: nothing to do


def test_a_borrowed_trust_is_read_but_never_deleted_here():
    """The trust of a caller's trust-scoped token (another heat_lite's
    stack): used, left to its owner."""
    CONF.set_override("auth_encryption_key", KEY)
    stored = trusts._BORROWED + trusts._store("abc123")
    assert "abc123" not in stored
    assert trusts.read(stored) == "abc123"
    # No [trustee] configured: a delete that asked Keystone would fail.
    trusts.delete(stored)


def test_keystoneauth_token_bodies_are_not_logged(caplog):
    logger = logging.getLogger("keystoneauth.identity.v3.base")
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        logger.debug('{"token": {"OS-TRUST:trust": {"id": "secret"}}}')
        logger.debug("Making authentication request to %s", "url")
    assert "secret" not in caplog.text
    assert "Making authentication request" in caplog.text


def test_a_keystone_error_never_carries_the_trust_id():
    exc = ks_exc.Forbidden("Cannot delete trust abc123def (HTTP 403)")
    error = trusts._failure("delete", exc, trust_id="abc123def")
    assert error.code == 403
    assert "abc123def" not in str(error)
    assert "<trust>" in str(error)
    down = trusts._failure("delete", ks_exc.ConnectFailure("refused"))
    assert down.code == 503
    roles = trusts._failure("create", ks_exc.NotFound("no role"), ["admin"])
    assert (roles.code, str(roles)) == (
        400,
        "Missing required credential: roles ['admin']",
    )
