"""Change marks for polling clients (the dashboard): what a page asks
every few seconds instead of reading everything it shows again.

* ``GET /v1/{tenant}/stacks/{name}/{id}/changes``: the stack's status
  and one mark each for the stack (header and outputs), its resources
  (graph and record versions) and its events;
* ``GET /v1/{tenant}/changes``: one mark of the project's stacks (the
  stacks list and its counts).

A mark is an opaque string that changes when its part changes. Each
answer is one RPC call and one SQL statement, and carries an ETag: a
client sending ``If-None-Match`` gets an empty 304 while nothing moved.
"""

from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, rule
from heat_lite.api.schemas import STRING, obj

RESPONSES = {
    "stack_changes": (
        200,
        obj(
            ("changes",),
            changes=obj(
                ("stack_status", "stack", "resources", "events"),
                stack_status=STRING,
                stack=STRING,
                resources=STRING,
                events=STRING,
            ),
        ),
    ),
    "project_changes": (
        200,
        obj(("changes",), changes=obj(("stacks",), stacks=STRING)),
    ),
}


@rule("stacks:show")
def stack_changes(req, tenant, name, stack_id):
    """The change marks of a stack's page (status, stack, resources,
    events)."""
    marks = req.engine.stack_changes(
        req.context, identity(tenant, name, stack_id)
    )
    return Reply(200, {"changes": marks})


@rule("stacks:index")
def project_changes(req, tenant):
    """The change mark of the project's stacks."""
    return Reply(200, {"changes": req.engine.project_changes(req.context)})
