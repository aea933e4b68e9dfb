"""A stack's traversals, /v1/{tenant}/stacks/{name}/{id}/traversals:
the running, queued and recent ones, and the cancel of a queued update
(heat_lite's own; doc/specs/update_semantics.md)."""

from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, rule


@rule("stacks:traversals")
def list_traversals(req, tenant, name, stack_id):
    """The stack's traversals, newest first: queued, running and the
    last finished ones, with who asked, their action, state and times."""
    return Reply(
        200,
        {
            "traversals": req.engine.list_traversals(
                req.context, identity(tenant, name, stack_id)
            )
        },
    )


@rule("stacks:cancel_traversal")
def cancel_traversal(req, tenant, name, stack_id, traversal_id):
    """Cancel a queued update (409 if it is not queued any more)."""
    return Reply(
        200,
        {
            "traversal": req.engine.cancel_traversal(
                req.context, identity(tenant, name, stack_id), traversal_id
            )
        },
    )
