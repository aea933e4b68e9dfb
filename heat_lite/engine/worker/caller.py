"""The token of the user who started a stack operation, kept for the
length of that operation.

In keystone mode the request context the API hands the engine carries the
caller's token. The engine keeps it, encrypted (``common.crypt``), in the
row of the operation's traversal; the row is deleted when the traversal is
replaced or finished, so the token does not outlive the operation. A
worker running an action of a plugin that declares ``needs_caller_token``
(OS::Heat::Stack) gives that plugin a request context made from it;
nothing is read for other plugins. Without ``[DEFAULT]
auth_encryption_key``, or in noauth mode, nothing is kept. The token is
never logged nor returned.
"""

import logging

from heat_lite.common import context, crypt
from heat_lite.db import caller_tokens

LOG = logging.getLogger(__name__)


def keep(ctxt):
    """The encrypted token of ``ctxt`` to keep with a new traversal, or
    None when there is none (noauth) or no key to encrypt it with."""
    token = getattr(ctxt, "auth_token", None)
    if not token or not crypt.enabled():
        return None
    return crypt.encrypt(token)


def kept(traversal):
    """The encrypted token kept with ``traversal`` (to carry it over to
    a follow-up the engine starts itself, such as a rollback), or None."""
    if not traversal or not crypt.enabled():
        return None
    return caller_tokens.traversal_token(traversal)


def request_context(record, traversal):
    """A request context carrying the operation's caller token, for a
    plugin acting on ``record`` in ``traversal``; None if there is none.
    """
    if not crypt.enabled():
        return None
    token = caller_tokens.operation_token(record["stack_id"], traversal)
    if token is None:
        return None
    try:
        plain = crypt.decrypt(token)
    except crypt.Unreadable:
        LOG.warning(
            "The caller's token kept for stack %s cannot be "
            "decrypted (auth_encryption_key differs between "
            "engines?); resource %s acts without it",
            record["stack_id"],
            record["name"],
        )
        return None
    # overwrite=False: not this thread's current context (logging).
    return context.RequestContext(
        auth_token=plain,
        project_id=record.get("stack_tenant"),
        overwrite=False,
    )
