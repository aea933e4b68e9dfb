"""Saved plans of updates (``[engine] topic`` calls; doc/specs/saved_plans.md).

``create_plan`` stores an update's inputs with the preview made of them
(whatever ``preview_update_stack`` answers, unchanged) and the basis it
was computed against (``db.plans``); ``apply_plan`` starts exactly that
update, its staleness check done in the transaction that starts it, or
refuses a stale, expired or applied plan (409). The basis is read before
the preview: a change that lands between the two makes the plan stale
rather than wrong.
"""

import datetime
import uuid

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import CONVERGE, Status
from heat_lite.db import models
from heat_lite.db import plans as db_plans
from heat_lite.db import traversal_log as db_log
from heat_lite.engine import trusts
from heat_lite.engine.drift import inputs as drift_inputs
from heat_lite.engine.endpoint import goals, traversals
from heat_lite.engine.endpoint.base import TARGET, expected, find_stack
from heat_lite.engine.traversal import queue as update_queue
from heat_lite.engine.worker import caller

CONF = conf.CONF
# The request keys a plan keeps, in ``update_stack``'s argument order.
REQUEST_KEYS = (
    "template",
    "params",
    "files",
    "environment",
    "environment_files",
    "args",
    "existing",
)


def _when(value):
    return value.isoformat() if value is not None else None


def status_now(plan, now, basis=None):
    """(status, reason) of a stored plan as it stands at ``now``: a READY
    one past its expiry is EXPIRED, one whose basis differs from
    ``basis`` (the stack's now, when given) is STALE."""
    if plan["status"] != db_plans.READY:
        return plan["status"], plan["status_reason"]
    if plan["expires_at"] <= now:
        return "EXPIRED", "expired at %s" % _when(plan["expires_at"])
    if basis is not None and "basis" in plan:
        changed = db_plans.basis_changes(plan["basis"], basis)
        if changed:
            return db_plans.STALE, "; ".join(changed)
    return db_plans.READY, None


def view(plan, stack, now, basis=None):
    """A plan as the API shows it; with ``changes`` (show, create) it
    carries the preview as ``resource_changes``, as a preview does."""
    status, reason = status_now(plan, now, basis)
    result = {
        "id": plan["id"],
        "stack_id": stack["id"],
        "stack_name": stack["name"],
        "status": status,
        "status_reason": reason,
        "existing": bool(plan["existing"]),
        "traversal": plan["traversal"],
        "created_by": plan["created_by"],
        "created_at": _when(plan["created_at"]),
        "expires_at": _when(plan["expires_at"]),
        "applied_at": _when(plan["applied_at"]),
        "applied_traversal": plan["applied_traversal"],
    }
    if "changes" in plan:
        # As a preview answers: the drift report's state beside Heat's
        # five lists, not among them.
        changes = dict(plan["changes"])
        result["drift"] = changes.pop("drift", None)
        result["resource_changes"] = changes
        result["template"] = plan["request"]["template"]
        result["basis"] = {
            "stacks": plan["basis"]["stacks"],
            "records": len(plan["basis"]["records"]),
            "drift_reports": len(plan["basis"]["drift"]),
        }
    return result


class PlanEndpoint:
    """``create_plan``, ``list_plans``, ``show_plan``, ``apply_plan``,
    ``delete_plan``.

    :param stack_service: the ``service.EngineService``: its preview
        makes a plan's changes and its ``ops``, ``goals`` and ``services``
        start an applied one.
    """

    target = TARGET

    def __init__(self, stack_service):
        self.stacks = stack_service

    @expected
    def create_plan(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
    ):
        """Preview an update and store it as a plan (call).

        :returns: the plan, with ``resource_changes`` (the preview of
            ``preview_update_stack`` with ``show_nested``).
        :raises: what ``preview_update_stack`` raises for the request.
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        basis = db_plans.plan_basis(stack["id"])
        request = {
            "template": template,
            "params": params,
            "files": files,
            "environment": environment,
            "environment_files": environment_files,
            "args": args,
            "existing": existing,
        }
        # With the drift it would revert or leave (issue 32 item 2): a
        # plan is reviewed for both.
        changes = self.stacks.preview_update_stack(
            ctxt, stack_identity, **request, show_nested=True, with_drift=True
        )
        now = models.utcnow()
        plan = db_plans.plan_create(
            {
                "id": str(uuid.uuid4()),
                "stack_id": stack["id"],
                "tenant": ctxt.project_id,
                "existing": bool(existing),
                "request": request,
                "changes": changes,
                "basis": basis,
                "traversal": basis["stacks"].get(stack["id"]),
                "created_by": update_queue.requested_by(ctxt),
                "created_at": now,
                "expires_at": now + datetime.timedelta(seconds=CONF.plans.ttl),
                "applied_at": None,
                "applied_traversal": None,
            },
            CONF.plans.max_per_stack,
        )
        return view(plan, stack, now)

    @expected
    def list_plans(self, ctxt, stack_identity, limit=None, marker=None):
        """The stack's plans, newest first, without their changes (call).

        :raises StackNotFound: (404).
        :raises Invalid: (400) for a bad marker.
        """
        stack = find_stack(ctxt, stack_identity)
        rows = db_plans.plan_get_all(
            stack["id"], ctxt.project_id, limit=limit, marker=marker
        )
        now = models.utcnow()
        return [view(row, stack, now) for row in rows]

    @expected
    def show_plan(self, ctxt, stack_identity, plan_id):
        """The plan with its changes; a READY one is shown STALE when its
        basis changed since (call).

        :raises StackNotFound, PlanNotFound: (404).
        """
        stack = find_stack(ctxt, stack_identity)
        plan = db_plans.plan_get(plan_id, stack["id"], ctxt.project_id)
        basis = db_plans.plan_basis(stack["id"])
        return view(plan, stack, models.utcnow(), basis)

    @expected
    def delete_plan(self, ctxt, stack_identity, plan_id):
        """Delete the plan (call).

        :raises StackNotFound, PlanNotFound: (404).
        """
        stack = find_stack(ctxt, stack_identity)
        db_plans.plan_delete(plan_id, stack["id"], ctxt.project_id)

    @expected
    def apply_plan(self, ctxt, stack_identity, plan_id):
        """Start exactly the plan's update (call).

        :returns: the plan, APPLIED, with the update's traversal.
        :raises StackNotFound, PlanNotFound: (404).
        :raises StalePlan: (409) a record, traversal or drift report of the
            stack's tree changed since the plan was made.
        :raises PlanExpired, PlanAlreadyApplied: (409).
        :raises ActionInProgress: (409) a ``queue`` or ``reject`` stack
            runs an operation (a plan never waits in a queue).
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        plan = db_plans.plan_get(plan_id, stack["id"], ctxt.project_id)
        db_plans.check_usable(plan, stack["name"], models.utcnow())
        if stack["current_traversal"] != plan["traversal"]:
            self._stale(plan, stack, "the traversal of the stack changed")
        started = self._start(ctxt, stack, plan)
        if started is None:
            self._stale(plan, stack, "another operation started meanwhile")
        plan = db_plans.plan_get(plan_id, stack["id"], ctxt.project_id)
        return view(plan, stack, models.utcnow())

    def _start(self, ctxt, stack, plan):
        request = plan["request"]
        args = request["args"]
        identity = {"stack_id": stack["id"], "stack_name": stack["name"]}
        stack, template, env, files, bound = self.stacks.goals.check(
            ctxt, identity, *(request[k] for k in REQUEST_KEYS)
        )
        _check_semantics(stack)
        trusts.ensure(ctxt, stack)
        if args.get("revert_drift"):
            drift_inputs.check_current(stack)
        try:
            # The drift report it was computed against is in the plan's
            # basis: a newer detection has made the plan stale already.
            started = self.stacks.start_update(
                ctxt,
                dict(stack, current_traversal=plan["traversal"]),
                bound,
                (template, env, files),
                args,
                update_queue.update_columns(stack, args, request["existing"]),
                caller.keep(ctxt),
                False,
                saved_plan={"id": plan["id"], "stack_name": stack["name"]},
            )
        except exception.StalePlan as exc:
            db_plans.plan_mark_stale(plan["id"], exc.kwargs["reason"])
            raise
        if started is not None and args.get("update_semantics") is not None:
            # Only once applied: a refused plan changes nothing.
            traversals.set_semantics(stack, goals.semantics_arg(args))
        return started

    @staticmethod
    def _stale(plan, stack, reason):
        db_plans.plan_mark_stale(plan["id"], reason)
        raise exception.StalePlan(
            plan=plan["id"], stack_name=stack["name"], reason=reason
        )


def _check_semantics(stack):
    """A ``queue`` or ``reject`` stack takes a plan only when idle."""
    if update_queue.semantics_of(stack) == CONVERGE:
        return
    if (
        stack["status"] == Status.IN_PROGRESS
        or db_log.queue_next(stack["id"]) is not None
    ):
        raise exception.ActionInProgress(
            stack_name=stack["name"], action=stack["action"]
        )
