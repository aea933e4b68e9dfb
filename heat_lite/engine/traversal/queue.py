"""Per-stack update semantics: what an update does while another
operation runs on its stack (doc/specs/update_semantics.md).

``converge`` (the default): the update takes the stack over at once
(``StackOps.start``); the running traversal stops at its next checkpoint
and the traversal log marks it SUPERSEDED by the new one.
``reject``: the update is refused (409 ActionInProgress) while an
operation runs, as CloudFormation does.
``queue``: the update waits as a QUEUED row of the traversal log, holding
its request; updates run one after another in the order they were
queued, each merged with (PATCH) and converged from the result of the
last. Whoever finishes a traversal of such a stack starts the next one
(``StackOps`` calls ``start_next``); if that engine dies first, the
watchdog of any engine does (``queued_idle_stacks``). The start is the
conditional QUEUED -> RUNNING of the row in the transaction that swaps
the stack's traversal, so a queued update runs at most once.

Only updates (PUT and PATCH) follow the semantics; a delete, a cancel,
the rollback of a failure and the fleet's updates (rollouts, promotions,
app deploys) take the stack over as they always did.
"""

import json
import logging
import uuid

from heat_lite import conf
from heat_lite.common import context, exception, verify_spec
from heat_lite.common.states import CONVERGE, QUEUE, REJECT, Action, Status
from heat_lite.db import stacks as db_stacks
from heat_lite.db import traversal_log as db_log
from heat_lite.engine.drift import inputs as drift_inputs
from heat_lite.engine.traversal import ops
from heat_lite.engine.worker import caller

CONF = conf.CONF
LOG = logging.getLogger(__name__)
_RETRIES = 20


def semantics_of(stack):
    """The stack's update semantics (``states.UPDATE_SEMANTICS``)."""
    return stack.get("update_semantics") or CONVERGE


def requested_by(ctxt):
    """Who asked, as the traversal log shows it."""
    return ctxt.user_name or ctxt.user_id


class UpdateQueue:
    """Starts, refuses or queues the updates of stacks, by semantics.

    :param stack_ops: the ``StackOps`` that starts traversals.
    :param goals: the ``endpoint.goals.UpdateGoals`` that turns a queued
        request into its goal when its turn comes.
    """

    def __init__(self, stack_ops, goals, services=None):
        self.ops = stack_ops
        self.goals = goals
        # The plugins' services: a queued update resolves the drifted
        # resources' new properties with them (``drift.inputs``).
        self.services = services

    def update(self, ctxt, stack, request, start):
        """Run an update of ``stack`` (already checked) by its semantics.

        :param request: the update's arguments as ``update_stack`` got
            them (kept for a queued one, to bind its goal when it runs).
        :param start: ``start(stack, retry)`` starts it now (the
            ``StackOps.start`` of the checked goal); returns what it
            returns.
        :returns: {"traversal", "state", "position"}: the new traversal,
            RUNNING or QUEUED (with its place in the queue).
        :raises ActionInProgress: ``reject`` while an operation runs.
        :raises UpdateQueueFull: ``queue`` with a full queue.
        """
        semantics = semantics_of(stack)
        if semantics == CONVERGE:
            started = start(stack, True)
            return {"traversal": started["new_traversal"], "state": "RUNNING"}
        for _ in range(_RETRIES):
            busy = stack["status"] == Status.IN_PROGRESS
            if semantics == QUEUE and not busy:
                # An update queued earlier still waits (its starter died):
                # it goes first.
                busy = db_log.queue_next(stack["id"]) is not None
            if busy and semantics == REJECT:
                raise exception.ActionInProgress(
                    stack_name=stack["name"], action=stack["action"]
                )
            if busy:
                return self._enqueue(ctxt, stack, request)
            started = start(stack, False)
            if started is not None:
                return {
                    "traversal": started["new_traversal"],
                    "state": "RUNNING",
                }
            # Lost the race to another operation: look again.
            stack = db_stacks.stack_get(stack["id"])
            ops.check_start(stack, Action.UPDATE)
        raise exception.ConcurrentTransaction(what="stack %s" % stack["id"])

    def _enqueue(self, ctxt, stack, request):
        # The request keeps the caller's context but no token of it
        # (``caller_token`` keeps that, encrypted).
        values = {k: v for k, v in ctxt.to_dict().items() if "token" not in k}
        traversal = str(uuid.uuid4())
        position = db_log.queue_add(
            stack["id"],
            traversal,
            requested_by(ctxt),
            dict(request, context=values),
            caller.keep(ctxt),
            CONF.engine.max_queued_updates,
        )
        LOG.info(
            "Update %s of stack %s queued (%d waiting)",
            traversal,
            stack["id"],
            position,
        )
        # The running operation may have ended between the read of the
        # stack and the queueing: then nobody else would start it.
        self.start_next(stack["id"])
        return {
            "traversal": traversal,
            "state": "QUEUED",
            "position": position,
        }

    def start_next(self, stack_id):
        """Start the stack's oldest queued update if no operation runs.

        Idempotent: a queued update starts at most once (the conditional
        QUEUED -> RUNNING in ``traversal_begin``); one that cannot start
        any more (its stack deleted, its goal refused) is CANCELLED with
        the reason and the next one is tried.

        :returns: the started traversal's id, or None.
        """
        for _ in range(CONF.engine.max_queued_updates + 1):
            entry = db_log.queue_next(stack_id)
            if entry is None:
                return None
            try:
                stack = db_stacks.stack_get(stack_id)
            except exception.StackNotFound:
                stack = None
            if stack is not None and stack["status"] == Status.IN_PROGRESS:
                return None  # the end of the running one starts it
            try:
                if stack is None or stack["deleted_at"] is not None:
                    raise exception.StackNotFound(name=stack_id)
                started = self._start(stack, entry)
            except exception.HeatLiteException as exc:
                reason = "Could not start: %s" % exc
                if db_log.queue_cancel(stack_id, entry["id"], reason):
                    LOG.warning(
                        "Queued update %s of stack %s: %s",
                        entry["id"],
                        stack_id,
                        reason,
                    )
                continue
            # None: another engine started it, or another operation took
            # the stack (its end starts the queue again).
            return started and started["new_traversal"]
        return None

    def _start(self, stack, entry):
        request = entry["request"]
        ctxt = context.RequestContext.from_dict(request["context"])
        ops.check_start(stack, Action.UPDATE)
        template, env, files, bound = self.goals.goal(
            ctxt,
            stack,
            request["template"],
            request["params"],
            request["files"],
            request["environment"],
            request["environment_files"],
            request["args"],
            request["existing"],
        )
        drift = drift_inputs.update_inputs(
            stack, bound, request["args"].get("revert_drift"), self.services
        )
        return self.ops.start(
            stack,
            Action.UPDATE,
            bound,
            new_template=(template, env, files),
            extra=update_columns(stack, request["args"], request["existing"]),
            events=drift.events,
            revert=drift.revert,
            caller_token=entry["caller_token"],
            verify=_verify(request["args"]),
            traversal=entry["id"],
            retry=False,
            requested_by=entry["requested_by"],
            queued=True,
        )


def _verify(args):
    if args.get("verify") is None:
        return None
    return verify_spec.parse(args["verify"])


def update_columns(stack, args, existing):
    """The stack columns an update request sets besides its goal."""
    extra = {"timeout": args.get("timeout_mins", stack["timeout"])}
    if args.get("disable_rollback") is not None:
        extra["disable_rollback"] = args["disable_rollback"]
    if "tags" in args or not existing:
        extra["tags"] = json.dumps(args["tags"]) if args.get("tags") else None
    return extra
