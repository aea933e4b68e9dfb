"""The promotions' RPC endpoint (on the ``[engine] topic``): create,
its dry run (preview), list, show, a target stack's provenance, and the
rollback action.

Creating a promotion resolves it (``promotion_plan``: every refusal is
this call's answer, before anything changes), stores it owned by this
engine and starts its flow here. A rollback is a conditional write
(COMPLETE, and no newer promotion changed the target since; 409
otherwise) that hands the promotion to this engine's runner again, which
runs its rollback flow.
"""

import uuid

import oslo_messaging as messaging

from heat_lite.common import context, exception, policy, promotion_spec
from heat_lite.common.states import PROMOTION as P
from heat_lite.db import promotions as db_promotions
from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint.base import expected, find_stack
from heat_lite.engine.endpoint.views import timestamp
from heat_lite.engine.fleet.promotion import plan as promotion_plan
from heat_lite.engine.fleet.promotion import preview as promotion_preview
from heat_lite.engine.worker import caller

CROSS_PROJECT = "promotions:create_cross_project"


def target_context(ctxt, project, scoped=None):
    """The caller acting in the target's ``project``.

    :param scoped: in keystone mode, what the API got from rescoping
        the caller's token to that project: ``{"auth_token", "roles"}``
        (the caller's roles *there*); else the caller's own are used.
    """
    scoped = scoped or {}
    roles = scoped.get("roles", ctxt.roles)
    return context.RequestContext(
        user_id=ctxt.user_id,
        project_id=project,
        roles=list(roles or ()),
        is_admin="admin" in (roles or ()),
        auth_token=scoped.get("auth_token", ctxt.auth_token),
        request_id=ctxt.request_id,
        overwrite=False,
    )


class PromotionEndpoint:
    """Promotion requests from the API (or any RPC client).

    :param runner: the process's ``promotion_runner.PromotionRunner``.
    :param services: the plugins' services (a preview resolves with them).
    """

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, runner, services):
        self.runner = runner
        self.services = services

    @staticmethod
    def _request(ctxt, body, target_scope):
        """(spec, caller in the target's project) of a promotion request,
        its cross-project right checked."""
        spec = promotion_spec.parse(body)
        project = spec["target"]["project"] or ctxt.project_id
        spec["target"]["project"] = project
        tctxt = target_context(ctxt, project, target_scope)
        if project != ctxt.project_id:
            # Both projects: the caller's own, and its roles in the other.
            policy.authorize(ctxt, CROSS_PROJECT, ctxt.project_id)
            policy.authorize(tctxt, CROSS_PROJECT, project)
        return spec, tctxt

    @expected
    def preview_promotion(self, ctxt, body, target_scope=None):
        """What ``create_promotion`` with ``body`` would change; nothing
        is stored or started (``promotion_preview``)."""
        spec, tctxt = self._request(ctxt, body, target_scope)
        return promotion_preview.preview(ctxt, tctxt, spec, self.services)

    @expected
    def create_promotion(self, ctxt, body, target_scope=None):
        spec, tctxt = self._request(ctxt, body, target_scope)
        values = promotion_plan.plan(ctxt, tctxt, spec)
        # The flow acts in the target's project with these roles (the
        # resource types' policy is checked with them again).
        values["spec"]["roles"] = list(tctxt.roles or ())
        promotion_id = str(uuid.uuid4())
        engine_id, epoch = self.runner.fence.owner
        db_promotions.promotion_create(
            dict(
                values,
                id=promotion_id,
                status=P.IN_PROGRESS,
                status_reason="Promotion started",
                caller_token=caller.keep(tctxt),
                engine_id=engine_id,
                epoch=epoch,
            )
        )
        self.runner.launch(promotion_id)
        return view(db_promotions.promotion_get(promotion_id))

    @expected
    def list_promotions(self, ctxt, limit=None, marker=None):
        rows = db_promotions.promotion_get_all(ctxt.project_id, limit, marker)
        return [view(r) for r in rows]

    @expected
    def show_promotion(self, ctxt, promotion_id):
        return view(db_promotions.promotion_get(promotion_id, ctxt.project_id))

    @expected
    def stack_promotions(self, ctxt, stack_identity):
        """Every promotion that changed the stack, newest first."""
        stack = find_stack(ctxt, stack_identity)
        return [
            view(r) for r in db_promotions.promotions_of_stack(stack["id"])
        ]

    @expected
    def promotion_action(self, ctxt, promotion_id, action):
        if action != "rollback":
            raise exception.InvalidPromotion(
                reason="the only action is rollback"
            )
        row = db_promotions.promotion_get(promotion_id, ctxt.project_id)
        if row["target_tenant"] != ctxt.project_id:
            policy.authorize(ctxt, CROSS_PROJECT, ctxt.project_id)
        if not db_promotions.promotion_request_rollback(
            promotion_id, ctxt.project_id, self.runner.fence.owner
        ):
            raise exception.PromotionConflict(reason=_why_not(row))
        self.runner.launch(promotion_id)
        return view(db_promotions.promotion_get(promotion_id))


def _why_not(row):
    row = db_promotions.promotion_get(row["id"])
    if row["status"] != P.COMPLETE or row["rollback_requested"]:
        return "promotion %s is %s%s: only a COMPLETE one rolls back" % (
            row["id"],
            row["status"],
            " (rolled back before)" if row["rollback_requested"] else "",
        )
    return (
        "a newer promotion has changed stack %s since promotion %s (only "
        "the newest promotion of a stack rolls back)"
        % (row["target_stack_name"], row["id"])
    )


def view(row):
    """The API's promotion dict."""
    spec = row["spec"]
    return {
        "id": row["id"],
        "status": row["status"],
        "status_reason": row["status_reason"],
        "source": {
            "stack_id": row["source_stack_id"],
            "stack_name": row["source_stack_name"],
            "project": row["tenant"],
            "template_id": row["source_template_id"],
            "template_sha256": row["source_template_sha256"],
        },
        "target": {
            "stack_id": row["target_stack_id"],
            "stack_name": row["target_stack_name"],
            "project": row["target_tenant"],
            "created": bool(row["created_target"]),
        },
        "parameters": spec["parameters"],
        "environment": spec["environment"],
        "reset_parameters": spec["reset_parameters"],
        "verify": spec["verify"],
        "rolled_back": bool(row["rollback_requested"]),
        # a newer promotion changed the target since: this one can no
        # longer roll back (rows read without it: not known, None)
        "overtaken_by": row.get("overtaken_by"),
        "created_at": timestamp(row["created_at"]),
        "updated_at": timestamp(row["updated_at"]),
        "finished_at": timestamp(row["finished_at"]),
        "user": row["username"],
    }
