"""Handlers of /v1/{tenant}/rollouts: create, list, show, delete and the
actions (pause, resume, cancel, rollback) of rollouts (``engine.fleet``).
"""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import rollout_spec

ACTIONS = ("pause", "resume", "cancel", "rollback")


@rule("rollouts:create")
def create_rollout(req, tenant):
    """Start a rollout: one update, verified, over the matched stacks."""
    body = rollout_spec.parse(req.body())
    rollout = req.engine.create_rollout(req.context, body)
    return Reply(201, {"rollout": rollout})


@rule("rollouts:index")
@query(**schemas.Q_PAGE)
def list_rollouts(req, tenant):
    """List the project's rollouts, newest first, a page at a time with
    ``limit`` and ``marker``."""
    found = req.engine.list_rollouts(
        req.context,
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"rollouts": found})


@rule("rollouts:show")
def show_rollout(req, tenant, rollout_id):
    """Show a rollout with its targets."""
    rollout = req.engine.show_rollout(req.context, rollout_id)
    return Reply(200, {"rollout": rollout})


@rule("rollouts:delete")
def delete_rollout(req, tenant, rollout_id):
    """Delete a finished rollout."""
    req.engine.delete_rollout(req.context, rollout_id)
    return Reply(204)


@rule("rollouts:action")
def rollout_action(req, tenant, rollout_id):
    """Pause, resume, cancel or roll back a rollout."""
    action = req.action(ACTIONS)
    rollout = req.engine.rollout_action(req.context, rollout_id, action)
    return Reply(200, {"rollout": rollout})
