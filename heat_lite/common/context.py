"""The request context that travels from the API over RPC to the engine."""

from oslo_context import context


class RequestContext(context.RequestContext):
    """oslo.context's context; project_id scopes every stack query."""


def get_admin_context():
    """A context for engine-internal work (recovery, watchdogs)."""
    return RequestContext(is_admin=True, roles=["admin"], overwrite=False)
