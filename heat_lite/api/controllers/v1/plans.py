"""A stack's saved plans, /v1/{tenant}/stacks/{name}/{id}/plans[/{plan_id}]
(heat_lite's own; doc/specs/saved_plans.md): an update previewed and
kept, then applied exactly as reviewed, or refused as stale (409)."""

from heat_lite.api import schemas
from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.controllers.v1.stack import identity, update_request
from heat_lite.api.request import Reply, query, rule


@rule("stacks:plan_create")
def create_plan(req, tenant, name, stack_id):
    """Preview an update (a PUT body; ``"existing": true`` for a PATCH)
    and save it as a plan, with the records it was computed against."""
    body = req.body()
    existing = stack_body.existing(body)
    plan = req.engine.create_plan(
        *update_request(req, tenant, name, stack_id, existing, body),
        existing=existing,
    )
    return Reply(201, {"plan": plan})


@rule("stacks:plan_index")
@query(**schemas.Q_PAGE)
def list_plans(req, tenant, name, stack_id):
    """The stack's plans, newest first, a page at a time with ``limit``
    and ``marker``."""
    plans = req.engine.list_plans(
        req.context,
        identity(tenant, name, stack_id),
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"plans": plans})


@rule("stacks:plan_show")
def show_plan(req, tenant, name, stack_id, plan_id):
    """A plan with its changes, in the shape of a preview."""
    plan = req.engine.show_plan(
        req.context, identity(tenant, name, stack_id), plan_id
    )
    return Reply(200, {"plan": plan})


@rule("stacks:plan_delete")
def delete_plan(req, tenant, name, stack_id, plan_id):
    """Delete a plan."""
    req.engine.delete_plan(
        req.context, identity(tenant, name, stack_id), plan_id
    )
    return Reply(204)


@rule("stacks:plan_apply")
def apply_plan(req, tenant, name, stack_id, plan_id):
    """Start exactly the plan's update (whatever the body says), or 409
    when it is stale, expired or applied."""
    req.body(any_json=True)  # read and ignored: the plan is the update
    plan = req.engine.apply_plan(
        req.context, identity(tenant, name, stack_id), plan_id
    )
    return Reply(202, {"plan": plan})
