"""The engine's RPC endpoint (topic ``[engine] topic``).

Each method checks the request, reads or starts work, and answers in
Heat's engine format. Typed exceptions are expected: they go back to the
caller instead of being logged as errors here.
"""

import logging
import re
import uuid

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import TRAVERSAL, Action, Status
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import trusts
from heat_lite.engine.drift import endpoint as drift_endpoint
from heat_lite.engine.drift import inputs as drift_inputs
from heat_lite.engine.endpoint import (
    abandon,
    goals,
    plans,
    preview,
    queries,
    snapshots,
    traversals,
    views,
)
from heat_lite.engine.endpoint.base import (
    TARGET,
    bound_template,
    expected,
    find_stack,
    records_by_name,
)
from heat_lite.engine.endpoint.catalog import CatalogEndpoint
from heat_lite.engine.endpoint.changes import ChangesEndpoint
from heat_lite.engine.endpoint.reads import ReadEndpoint
from heat_lite.engine.endpoint.references import ReferenceEndpoint
from heat_lite.engine.endpoint.resources import ResourceEndpoint
from heat_lite.engine.endpoint.software_configs import SoftwareConfigEndpoint
from heat_lite.engine.endpoint.software_deployments import (
    SoftwareDeploymentEndpoint,
)
from heat_lite.engine.fleet.app import builds as builds_endpoint
from heat_lite.engine.fleet.app import endpoint as app_endpoint
from heat_lite.engine.fleet.promotion import endpoint as promotion_endpoint
from heat_lite.engine.fleet.retention import endpoint as image_endpoint
from heat_lite.engine.fleet.rollout import endpoint as rollout_endpoint
from heat_lite.engine.traversal import ops
from heat_lite.engine.traversal import queue as update_queue
from heat_lite.engine.worker import adopt, caller
from heat_lite.resources import services as plugin_services

CONF = conf.CONF
LOG = logging.getLogger(__name__)
_UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
    r"[0-9a-f]{12}$"
)


_expected = expected


def endpoints(
    stack_ops, services, stack_service=None, rollouts=None, promotions=None
):
    """The endpoint objects of the [engine] topic, for one RPC server.

    oslo.messaging finds each method on whichever of them has it; each is
    given what it needs here. The stack operations need ``stack_ops`` (or
    are ``stack_service``, when the caller keeps it for other uses); the
    reads, the resource calls, the catalog, software configs and apps
    work on the database alone; the fleet's need the process's runners (an
    engine without them answers no fleet call).

    :param services: the plugins' services (``resources.services``):
        whatever makes plugin instances is given them.
    :param rollouts: the ``fleet.rollout.runner.RolloutRunner``.
    :param promotions: the ``fleet.promotion.runner.PromotionRunner``.
    """
    stack_service = stack_service or EngineService(stack_ops, services)
    found = [
        stack_service,
        ReadEndpoint(services),
        ResourceEndpoint(services),
        CatalogEndpoint(),
        SoftwareConfigEndpoint(),
        SoftwareDeploymentEndpoint(),
        ReferenceEndpoint(services),
        ChangesEndpoint(),
        snapshots.SnapshotEndpoint(stack_ops, services),
        app_endpoint.AppEndpoint(services),
        builds_endpoint.BuildEndpoint(),
        image_endpoint.ImageEndpoint(),
        drift_endpoint.DriftEndpoint(),
        traversals.TraversalEndpoint(),
        plans.PlanEndpoint(stack_service),
    ]
    if rollouts is not None:
        found.append(rollout_endpoint.RolloutEndpoint(rollouts))
    if promotions is not None:
        found.append(
            promotion_endpoint.PromotionEndpoint(promotions, services)
        )
    return found


class EngineService:
    """Stack operations requested by the API (or any RPC client): start
    and stop them. The other calls of the topic are answered by the
    endpoints of ``reads``, ``resources``, ``catalog`` and
    ``software_configs`` (see ``endpoints``).
    """

    target = TARGET

    def __init__(self, stack_ops, services, update_goals=None):
        self.ops: ops.StackOps = stack_ops
        # The plugins' services (previews and a delete's snapshots make
        # plugins).
        self.services: plugin_services.Services = services
        # Checks an update's new goal (a rollout's targets use it too).
        self.goals = update_goals or goals.UpdateGoals()
        # Starts, queues or refuses an update by the stack's semantics.
        self.queue = getattr(
            stack_ops, "queue", None
        ) or update_queue.UpdateQueue(stack_ops, self.goals, services)

    # Lookup --------------------------------------------------------------
    _stack = staticmethod(find_stack)

    @_expected
    def identify_stack(self, ctxt, stack_name):
        if not isinstance(stack_name, str):
            raise exception.StackNotFound(name=str(stack_name))
        if _UUID_RE.match(stack_name):
            try:
                return views.identity(
                    db_stacks.stack_get(stack_name, tenant=ctxt.project_id)
                )
            except exception.StackNotFound:
                pass
        return views.identity(
            db_stacks.stack_get_by_name(ctxt.project_id, stack_name)
        )

    # Create, update, delete ---------------------------------------------
    @_expected
    def create_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        limit = CONF.max_stacks_per_tenant
        if (
            limit != -1
            and not ctxt.is_admin
            and db_stacks.stack_count(ctxt.project_id) >= limit
        ):
            raise exception.RequestLimitExceeded(
                message="You have reached the maximum stacks per tenant, "
                "%d. Please delete some stacks." % limit
            )
        template, params, files = adopt.inputs(
            args.get("adopt_stack_data"), template, params, files
        )
        values, env, bound = goals.new_stack(
            ctxt,
            stack_name,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            str(uuid.uuid4()),
        )
        values["update_semantics"] = goals.semantics_arg(args)
        # The trust first: a create Keystone refuses leaves no stack.
        values["trust_id"] = trusts.create(ctxt)
        try:
            stack = db_stacks.stack_create(values, template, env, files or {})
        except Exception:
            trusts.delete(values["trust_id"])
            raise
        resources = None
        if values["action"] == Action.ADOPT:
            resources = adopt.check_data(args["adopt_stack_data"])
        self.ops.start(
            stack,
            values["action"],
            bound,
            goal_template_id=stack["raw_template_id"],
            adopt=resources,
            caller_token=caller.keep(ctxt),
            verify=goals.verify_document(args),
            requested_by=update_queue.requested_by(ctxt),
        )
        return views.identity(stack)

    @_expected
    def preview_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        template, params, files = adopt.inputs(
            args.get("adopt_stack_data"), template, params, files
        )
        values, _env, bound = goals.new_stack(
            ctxt,
            stack_name,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            "None",
        )
        stack = dict(
            values,
            owner_id=None,
            created_at=None,
            updated_at=None,
            deleted_at=None,
        )
        return views.stack_preview(
            stack, bound, preview.create_resources(stack, bound)
        )

    @_expected
    def update_stack(
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
        stack, template, env, files, bound = self.goals.check(
            ctxt,
            stack_identity,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            existing,
        )
        trusts.ensure(ctxt, stack)
        if args.get("update_semantics") is not None:
            stack = dict(
                stack, update_semantics=self._set_semantics(stack, args)
            )
        extra = update_queue.update_columns(stack, args, existing)
        token = caller.keep(ctxt)
        if args.get("revert_drift"):
            # Refused now (409) without a current report, not once queued.
            drift_inputs.check_current(stack)

        def start(stack, retry):
            return self.start_update(
                ctxt, stack, bound, (template, env, files), args, extra,
                token, retry,
            )  # fmt: skip

        request = {
            "template": template,
            "params": params,
            "files": files,
            "environment": environment,
            "environment_files": environment_files,
            "args": args,
            "existing": existing,
        }
        started = self.queue.update(ctxt, stack, request, start)
        return dict(views.identity(stack), traversal=started)

    def start_update(
        self, ctxt, stack, bound, goal, args, extra, token, retry, **more
    ):
        """Start the UPDATE traversal of ``stack`` towards ``goal``
        ((template, env, files), bound as ``bound``): the one start of an
        update request, run now, from the queue or as a saved plan
        (``more``: ``saved_plan``). The drift it reverts
        (``revert_drift``) or leaves in place (its events) is read here,
        at the start (``drift.inputs``)."""
        drift = drift_inputs.update_inputs(
            stack, bound, args.get("revert_drift"), self.services
        )
        return self.ops.start(
            stack,
            Action.UPDATE,
            bound,
            new_template=goal,
            extra=extra,
            events=drift.events,
            caller_token=token,
            verify=goals.verify_document(args),
            retry=retry,
            requested_by=update_queue.requested_by(ctxt),
            revert=drift.revert,
            **more,
        )

    @staticmethod
    def _set_semantics(stack, args):
        return traversals.set_semantics(stack, goals.semantics_arg(args))

    @_expected
    def preview_update_stack(
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
        show_nested=False,
        with_drift=False,
    ):
        """What an update would do: {kind: [resource]} (Heat's), and with
        ``with_drift`` (1.20) its ``drift``: the state of the report it
        is computed against (``drift.inputs.preview_drift``)."""
        stack, _t, _e, _f, bound = self.goals.check(
            ctxt,
            stack_identity,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            existing,
        )
        try:
            old_bound = bound_template(stack)
        except exception.HeatLiteException:
            old_bound = None
        reverting = bool(args.get("revert_drift"))
        state, entries = drift_inputs.preview_drift(stack, reverting)
        changes = preview.update_changes(
            stack,
            bound,
            old_bound,
            records_by_name(stack),
            self.services,
            show_nested=show_nested,
            drift=(entries, reverting),
        )
        if with_drift:
            changes["drift"] = state
        return changes

    @_expected
    def delete_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity, live=True)
        try:
            trusts.ensure(ctxt, stack)
        except exception.HeatLiteException as exc:
            # A stack with nothing in the cloud must stay deletable.
            LOG.warning(
                "Stack %s is deleted without a trust: %s", stack["id"], exc
            )
        # Heat's order: the snapshots (and their images) go first.
        snapshots.delete_all(stack, self.services)
        self.ops.start(
            stack,
            Action.DELETE,
            caller_token=caller.keep(ctxt),
            requested_by=update_queue.requested_by(ctxt),
        )

    @_expected
    def export_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity, live=True)
        if not CONF.enable_stack_abandon:
            raise exception.feature_disabled(
                "Stack Export", "enable_stack_abandon"
            )
        return abandon.export(stack)

    @_expected
    def abandon_stack(self, ctxt, stack_identity):
        """Return the abandon data and remove the stack tree, leaving its
        physical resources in place."""
        stack = self._stack(ctxt, stack_identity, live=True)
        if not CONF.enable_stack_abandon:
            raise exception.feature_disabled(
                "Stack Abandon", "enable_stack_abandon"
            )
        return abandon.abandon(stack)

    @_expected
    def stack_cancel_update(
        self, ctxt, stack_identity, cancel_with_rollback=True
    ):
        # A cancel that loses its race to another operation (a delete)
        # looks again, and gets the answer that operation's state gives.
        for _ in range(3):
            stack = self._stack(ctxt, stack_identity, live=True)
            allowed = (
                (Action.UPDATE,)
                if cancel_with_rollback
                else (Action.UPDATE, Action.CREATE)
            )
            if (
                stack["status"] != Status.IN_PROGRESS
                or stack["action"] not in allowed
            ):
                raise exception.NotSupported(
                    feature="Cancelling update when stack is %s_%s"
                    % (stack["action"], stack["status"])
                )
            if self._cancel(ctxt, stack, cancel_with_rollback):
                return
        raise exception.ConcurrentTransaction(what="stack %s" % stack["id"])

    def _cancel(self, ctxt, stack, cancel_with_rollback):
        """Stop the running operation; False if a newer one replaced it
        meanwhile."""
        reason = "Stack %s cancelled" % stack["action"]
        if cancel_with_rollback:
            started = self.ops.rollback(
                stack,
                events=[
                    ops.stack_event(
                        stack, stack["action"], Status.FAILED, reason
                    )
                ],
                caller_token=caller.keep(ctxt),
                running=True,
                supersedes_as=TRAVERSAL.CANCELLED,
                requested_by=update_queue.requested_by(ctxt),
            )
            return started is not None
        return self.ops.cancel(stack, reason)

    @_expected
    def stack_action(self, ctxt, stack_identity, action):
        """Suspend, resume or check a stack."""
        if action not in (Action.SUSPEND, Action.RESUME, Action.CHECK):
            raise exception.NotSupported(feature="Stack %s" % action)
        stack = self._stack(ctxt, stack_identity, live=True)
        ops.check_start(stack, action)
        trusts.ensure(ctxt, stack)
        self.ops.run_action(
            stack,
            action,
            caller_token=caller.keep(ctxt),
            requested_by=update_queue.requested_by(ctxt),
        )

    @_expected
    def stack_verdict(self, ctxt, stack_identity, status, reason=None):
        """A test runner's verdict (PASS / FAIL) on the stack's running
        verification (see ``engine.traversal.verify``)."""
        stack = self._stack(ctxt, stack_identity, live=True)
        self.ops.verifier.signal(stack, status, reason)

    @_expected
    def query_stacks(self, ctxt, selector, all_projects=False):
        """The stacks a selector matches (``engine.endpoint.queries``); every
        project's only for an admin."""
        if all_projects and not ctxt.is_admin:
            raise exception.Forbidden(action="stacks:query_all_projects")
        tenant = None if all_projects else ctxt.project_id
        return queries.Query(selector, tenant).run()
