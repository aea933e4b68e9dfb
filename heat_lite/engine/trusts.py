"""Keystone trusts: how a stack's resources act as the user who made it.

In keystone mode with a ``[trustee]`` configured (see ``conf.trustee``),
accepting an operation on a root stack that has no trust yet creates
one with the caller's token: trustor the caller, trustee heat_lite's
service user, on the stack's project, delegating
``trusts_delegated_roles`` (else every role of the token), with
impersonation so that the cloud sees the trustor as the actor. That is
Heat's ``deferred_auth_method = trusts``. The trust's id is kept in the
stack row (``stack.trust_id``, encrypted under ``auth_encryption_key``
when that is set) and copied into each nested stack; every action any
engine runs on the tree later -- polls, recovery, takeovers, rollouts,
verifications -- logs in as the trustee with that trust, so none depends
on the caller's token still being valid. The root stack's delete (or
abandon) deletes the trust.

A caller whose own token is trust-scoped (another heat_lite or a Heat
creating an ``OS::Heat::Stack`` here, acting through its stack's trust)
cannot make a trust: Keystone chains trusts only from one that allows
redelegation. When that trust's trustee is heat_lite's own trustee (the
same service user: one Keystone), the stack borrows it instead, as Heat
does (``create_trust_context`` keeps a context's trust): it is stored
marked as borrowed and never deleted here; its owner deletes it with the
stack that made it, after deleting this one.

An app has a trust of its own, made the same way when it is created
(``app.trust_id``): its builds upload their images through it, and the
stacks they create borrow it (``lent``); the app's delete deletes it,
after giving those stacks a trust of their own
(``engine.fleet.app.endpoint``).

A trust id with the trustee's password is a credential: it is never
logged, returned over the API or put in an event, and the requests that
carry it are sent with keystoneauth's logging off.
"""

import logging
import threading

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading
from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import session as ks_session

from heat_lite import conf
from heat_lite.common import crypt, exception
from heat_lite.conf import trustee as trustee_conf
from heat_lite.db import trusts as db_trusts
from heat_lite.engine import cloud

CONF = conf.CONF
LOG = logging.getLogger(__name__)
GROUP = trustee_conf.GROUP
# Marks a stored trust id encrypted under auth_encryption_key.
_ENCRYPTED = "fernet:"
# Marks a trust the caller's token was scoped to (see the docstring): it
# comes before the rest of the stored form.
_BORROWED = "borrowed:"
_IDENTITY = {
    "service_type": "identity",
    "interface": ks_plugin.AUTH_INTERFACE,
    "version": (3, 0),
}
_LOCK = threading.Lock()
_TRUSTEE_ID = {}


def enabled():
    """True when operations get a trust: keystone mode and a trustee."""
    return CONF.api.auth_strategy == "keystone" and bool(CONF[GROUP].auth_type)


def _session(**auth_kwargs):
    auth = loading.load_auth_from_conf_options(CONF, GROUP, **auth_kwargs)
    return loading.load_session_from_conf_options(CONF, GROUP, auth=auth)


def trusted_session(trust_id):
    """A keystoneauth1 session of the trustee scoped by ``trust_id``
    (it re-authenticates by itself when its token nears expiry)."""
    return _session(trust_id=trust_id)


def _trustee_id(session):
    with _LOCK:
        known = _TRUSTEE_ID.get("id")
    if known is None:
        known = session.get_user_id()
        with _LOCK:
            _TRUSTEE_ID["id"] = known
    return known


def _failure(verb, exc, roles=(), trust_id=None):
    """The typed error for a Keystone failure to ``verb`` a trust (its
    text becomes a stack's status reason: the trust id is cut out)."""
    text = "%s: %s" % (type(exc).__name__, exc)
    if trust_id:
        text = text.replace(trust_id, "<trust>")
    if isinstance(exc, ks_exc.NotFound) and verb == "create":
        # Keystone's answer to a role the trustor does not have.
        return exception.MissingCredentialError(
            required="roles %s" % sorted(roles)
        )
    if isinstance(exc, (ks_exc.Forbidden, ks_exc.Unauthorized)):
        return exception.Forbidden(
            message="Keystone refused to %s the trust heat_lite acts "
            "through: %s" % (verb, text)
        )
    return exception.TrustFailed(
        message="Keystone could not %s the trust heat_lite acts "
        "through: %s" % (verb, text)
    )


def _roles_wanted(ctxt):
    return list(CONF.trusts_delegated_roles) or list(ctxt.roles or ())


def create(ctxt):
    """Create a trust from the caller of ``ctxt`` to the trustee.

    :returns: the trust id as stored in the stack row, or None when no
        trust is made (noauth, no [trustee], no token in the context).
    :raises MissingCredentialError: the caller lacks a delegated role.
    :raises Forbidden: Keystone refused.
    :raises TrustFailed: Keystone could not be reached.
    """
    token = getattr(ctxt, "auth_token", None)
    if not enabled() or not token:
        return None
    roles = _roles_wanted(ctxt)
    body = {
        "trust": {
            "trustor_user_id": ctxt.user_id,
            "project_id": ctxt.project_id,
            "impersonation": True,
            "allow_redelegation": False,
            "roles": [{"name": name} for name in roles],
        }
    }
    try:
        trustee = _session()
        body["trust"]["trustee_user_id"] = _trustee_id(trustee)
        # The caller's own token, not the trustee's: only the trustor
        # may create a trust from itself.
        response = ks_session.Session(
            auth=None, verify=trustee.verify, cert=trustee.cert
        ).post(
            trustee.get_endpoint(**_IDENTITY).rstrip("/") + "/OS-TRUST/trusts",
            json=body,
            headers={"X-Auth-Token": token},
            log=False,
        )
    except ks_exc.Forbidden as exc:
        borrowed = _callers_trust(trustee, token, ctxt.project_id)
        if borrowed is None:
            raise _failure("create", exc, roles) from None
        return _BORROWED + _store(borrowed)
    except ks_exc.ClientException as exc:
        raise _failure("create", exc, roles) from None
    trust_id = response.json()["trust"]["id"]
    return _store(trust_id)


def _callers_trust(trustee, token, project_id):
    """The id of the trust ``token`` is scoped to, when heat_lite's
    trustee is that trust's trustee on ``project_id``; else None."""
    try:
        body = trustee.get(
            "/auth/tokens",
            endpoint_filter=_IDENTITY,
            headers={"X-Subject-Token": token},
            log=False,
        ).json()["token"]
    except (ks_exc.ClientException, ValueError, KeyError):
        return None
    trust = body.get("OS-TRUST:trust") or {}
    trustee_id = (trust.get("trustee_user") or {}).get("id")
    if (
        not trust.get("id")
        or trustee_id != _trustee_id(trustee)
        or (body.get("project") or {}).get("id") != project_id
    ):
        return None
    return trust["id"]


def lent(stored):
    """The stored form of a trust ``stored`` lent to a stack (an app's
    trust, to the stacks its builds create): the stack acts through it
    but never deletes it; its owner does. None for None."""
    if not stored or stored.startswith(_BORROWED):
        return stored
    return _BORROWED + stored


def delete(stored):
    """Delete the trust ``stored`` (as kept in a stack row); a trust that
    is already gone counts as deleted.

    :raises TrustFailed, Forbidden: the trust may still exist.
    """
    if stored and stored.startswith(_BORROWED):
        return  # the caller's trust: its owner deletes it
    trust_id = read(stored)
    if trust_id is None:
        return
    try:
        session = trusted_session(trust_id)
        session.delete(
            "/OS-TRUST/trusts/%s" % trust_id,
            endpoint_filter=_IDENTITY,
            log=False,
        )
    except ks_exc.NotFound:
        pass
    except ks_exc.Unauthorized as exc:
        # Keystone answers a login with a deleted trust with 401. If the
        # trustee itself can still log in, that is what this is.
        try:
            _session().get_token()
        except ks_exc.ClientException:
            raise _failure("delete", exc, trust_id=trust_id) from None
    except ks_exc.ClientException as exc:
        raise _failure("delete", exc, trust_id=trust_id) from None
    finally:
        cloud.side().forget(trust_id)


def _store(trust_id):
    if crypt.enabled():
        return _ENCRYPTED + crypt.encrypt(trust_id)
    return trust_id


def read(stored):
    """The plain trust id of a stored one (None for None).

    :raises crypt.Unreadable: encrypted under another key.
    """
    if not stored:
        return None
    if stored.startswith(_BORROWED):
        stored = stored[len(_BORROWED) :]
    if stored.startswith(_ENCRYPTED):
        return crypt.decrypt(stored[len(_ENCRYPTED) :])
    return stored


def for_stack(stack_id, stored=None):
    """The plain trust id a resource of ``stack_id`` acts through, or
    None. ``stored`` is the stack row's value when the caller has it."""
    if stored is None:
        stored = db_trusts.stack_trust(stack_id)
    try:
        return read(stored)
    except crypt.Unreadable:
        LOG.warning(
            "The trust kept for stack %s cannot be decrypted "
            "(auth_encryption_key differs between engines?)",
            stack_id,
        )
        return None


def ensure(ctxt, stack):
    """Give the root of ``stack``'s tree a trust if it has none yet (a
    stack created before trusts, or in noauth mode), with the token of
    the user now asking for an operation on it."""
    if not enabled() or stack.get("owner_id") or stack.get("trust_id"):
        return
    stored = create(ctxt)
    if stored is None:
        return
    if not db_trusts.stack_trust_set(stack["id"], stored):
        # Another request gave it one meanwhile: this one is not needed.
        delete(stored)


class _NoTokenBodies(logging.Filter):
    """Drops keystoneauth's DEBUG dump of each login's response body: a
    trust-scoped token's body names its trust."""

    def filter(self, record):
        return not str(record.msg).startswith('{"token"')


# keystoneauth logs every login's token body at DEBUG on this logger
# (when an operator turns keystoneauth's DEBUG on).
logging.getLogger("keystoneauth.identity.v3.base").addFilter(_NoTokenBodies())
