"""Handlers of /v1/{tenant}/promotions: promote a tested stack onto
another (``engine.fleet.promotion``), list, show, roll back; and a
target stack's provenance, /v1/{tenant}/stacks/{name}/{id}/promotions.
"""

from heat_lite.api import schemas, scope
from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception, promotion_spec

CROSS_PROJECT = "promotions:create_cross_project"


def _target_scope(req, tenant, body):
    """The caller's scope in the target's project, for a promotion into
    another project (None for its own)."""
    project = promotion_spec.parse(body)["target"]["project"]
    if project is None or project == tenant:
        return None
    req.authorize(CROSS_PROJECT, tenant)
    return scope.in_project(req.context, project)


@rule("promotions:create")
def create_promotion(req, tenant):
    """Promote a stack's last COMPLETE template onto a target stack."""
    body = req.body()
    promotion = req.engine.create_promotion(
        req.context, body, target_scope=_target_scope(req, tenant, body)
    )
    return Reply(201, {"promotion": promotion})


@rule("promotions:preview")
def preview_promotion(req, tenant):
    """What a promotion with this body would change (a dry run: nothing
    is stored or changed). Refused as the promotion itself would be."""
    body = req.body()
    found = req.engine.preview_promotion(
        req.context, body, target_scope=_target_scope(req, tenant, body)
    )
    return Reply(200, {"preview": found})


@rule("promotions:index")
@query(**schemas.Q_PAGE)
def list_promotions(req, tenant):
    """List the promotions from or into the project, newest first, a page
    at a time with ``limit`` and ``marker``."""
    found = req.engine.list_promotions(
        req.context,
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"promotions": found})


@rule("promotions:show")
def show_promotion(req, tenant, promotion_id):
    """Show a promotion."""
    promotion = req.engine.show_promotion(req.context, promotion_id)
    return Reply(200, {"promotion": promotion})


@rule("promotions:action")
def promotion_action(req, tenant, promotion_id):
    """Roll a promotion back: the target goes back to what it had."""
    body = req.body()
    if list(body) != ["rollback"]:
        raise exception.BadRequest(
            message="The only action is rollback"
            if len(body) == 1
            else ("Multiple actions specified" if body else "No action")
        )
    promotion = req.engine.promotion_action(
        req.context, promotion_id, "rollback"
    )
    return Reply(200, {"promotion": promotion})


@rule("promotions:stack")
def stack_promotions(req, tenant, name, stack_id):
    """List the promotions that changed the stack, newest first."""
    found = req.engine.stack_promotions(
        req.context, identity(tenant, name, stack_id)
    )
    return Reply(200, {"promotions": found})
