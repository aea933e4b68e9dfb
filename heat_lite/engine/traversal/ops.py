"""Stack operations: start traversals (create, update, delete, rollback,
cancel) and finish them (complete, failed).

Starting a traversal is synchronous — the stack is ``<ACTION>_IN_PROGRESS``
in the database when the RPC call returns — and the graph's first nodes
are cast to the workers. Every stack write is conditional on the
traversal it belongs to, so a superseded operation can never overwrite a
newer one.
"""

import logging
import uuid

from heat_lite.common import exception, notify, states
from heat_lite.common.states import QUEUE, Action, Status
from heat_lite.common.states import TRAVERSAL as T
from heat_lite.common.states import VERIFICATION as V
from heat_lite.db import events as db_events
from heat_lite.db import models
from heat_lite.db import stacks as db_stacks
from heat_lite.db import templates as db_templates
from heat_lite.db import traversals as db_traversals
from heat_lite.engine import definitions, trusts
from heat_lite.engine.traversal import planner
from heat_lite.engine.worker import caller

LOG = logging.getLogger(__name__)
_START_RETRIES = 20
# Actions that run on the stack's own template instead of a new goal.
KEEP_TEMPLATE = (Action.SUSPEND, Action.RESUME, Action.CHECK, Action.SNAPSHOT)
FORWARD_ONLY = planner.FORWARD_ONLY

# What ends a traversal, for ``successor``: failed (no rollback),
# cancelled, or rolled back.
FAILED_STEP, CANCELLED_STEP, ROLLBACK_STEP = "failed", "cancelled", "rollback"
_LINEAGE = uuid.UUID("5d0c6f1e-3b1a-4c55-9d44-6f0f8a3c2b7e")


def successor(traversal, step):
    """The id a traversal's end gives the stack's ``current_traversal``:
    a failure without rollback, a cancel (the stale id stops the walk) or
    the rollback traversal that follows a failure.

    Derived from ``traversal`` rather than random, so that whoever
    started ``traversal`` (a rollout) can tell its own failure or
    rollback from a later operation's (``verify.outcome``). Each end is
    a conditional write on ``traversal``, so at most one happens and the
    derived id is never used twice.
    """
    return str(uuid.uuid5(_LINEAGE, "%s/%s" % (traversal, step)))


def end_of(traversal, current, status):
    """How ``traversal`` ended, read from the stack's ``current``
    traversal and ``status``: FAILED (failed or cancelled without
    rollback, or its rollback failed), ROLLING_BACK, ROLLED_BACK; None if
    ``current`` is ``traversal`` itself or another operation's."""
    if current in (
        successor(traversal, FAILED_STEP),
        successor(traversal, CANCELLED_STEP),
    ):
        return V.FAILED
    rollback = successor(traversal, ROLLBACK_STEP)
    if current == rollback:
        return {
            Status.COMPLETE: V.ROLLED_BACK,
            Status.IN_PROGRESS: V.ROLLING_BACK,
        }.get(status, V.FAILED)
    if current in (
        successor(rollback, FAILED_STEP),
        successor(rollback, CANCELLED_STEP),
    ):
        return V.FAILED
    return None


def check_start(stack, action):
    """Raise if ``action`` may not start on ``stack`` as it is now.

    :raises StackNotFound: if the stack is deleted.
    :raises NotSupported: if its current action refuses ``action``
        (``states.check_transition``).
    """
    if stack["deleted_at"] is not None:
        raise exception.StackNotFound(name=stack["name"])
    feature = states.check_transition(stack["action"], action)
    if feature is not None:
        raise exception.NotSupported(feature=feature)


def stack_event(stack, action, status, reason):
    """The event Heat writes for a stack-level transition."""
    return db_events.event_values(
        stack["id"],
        stack["name"],
        stack["id"],
        action,
        status,
        reason,
        "OS::Heat::Stack",
    )


class StackOps:
    """Traversal lifecycle; ``dispatcher`` sends the first nodes.

    :param snapshots: ``endpoint.snapshots.Snapshots``: the end of a
        SNAPSHOT walk fills (or fails) its snapshot (None: no snapshots).
    """

    def __init__(self, dispatcher, snapshots=None):
        self.dispatcher = dispatcher
        # traversal.verify.Verifier, set by the process (it needs this
        # object, and this one asks it): holds the cleanup phase of a
        # verified traversal until its checks pass.
        self.verifier = None
        self.snapshots = snapshots
        # traversal.queue.UpdateQueue, set by the process (it starts
        # traversals here, and the end of one starts the next queued
        # update through it); None: no queue is run from here.
        self.queue = None

    # Starting ------------------------------------------------------------
    def start(
        self,
        stack,
        action,
        bound=None,
        new_template=None,
        goal_template_id=None,
        extra=None,
        events=(),
        retry=True,
        adopt=None,
        caller_token=None,
        verify=None,
        traversal=None,
        running=False,
        requested_by=None,
        queued=False,
        supersedes_as=None,
        revert=None,
        saved_plan=None,
    ):
        """Start a traversal of ``stack`` towards a goal.

        :param bound: the goal's BoundTemplate (None: no resources).
        :param new_template: (template, environment, files) to store as
            the goal, or None to use ``goal_template_id``.
        :param extra: other stack columns to set (timeout, tags, ...).
        :param events: events to write before the "started" one.
        :param retry: on a lost race, reload the stack and start anyway
            (user requests); if False give up (follow-ups of a traversal,
            such as a rollback, that a newer operation made moot).
        :param adopt: ADOPT only: {name: abandon data entry} of the
            resources to take over.
        :param caller_token: the encrypted token of the user who asked
            for it (``caller.keep``), kept for the traversal's lifetime.
        :param verify: a checked ``verify`` document: the checks run
            between the update and the cleanup phase (``verify``).
        :param traversal: the new traversal's id, chosen (and recorded)
            by the caller beforehand (a rollout, with ``retry=False``).
        :param running: start only if the stack is IN_PROGRESS (the
            rollback that follows a failure of the running traversal).
        :param requested_by: who asked (the traversal log shows it).
        :param queued: ``traversal`` is a QUEUED update of the traversal
            log (``traversal.queue``): it starts only if still QUEUED.
        :param supersedes_as: what the running traversal this one takes
            the stack from becomes in the log (default SUPERSEDED, with
            an event naming both; FAILED for a rollback of a failure,
            CANCELLED for a cancel: their own events say so).
        :param revert: revert_drift: {name: drift report entry} of the
            drifted resources the update converges back
            (``drift.inputs``).
        :param saved_plan: {"id", "stack_name"} of the saved plan this
            update applies: claimed in the transaction that starts it
            (``db.plans.plan_claim``); use with ``retry=False`` and the
            plan's traversal as ``stack["current_traversal"]``.
        :returns: the stack row as it was before, with the new
            traversal's id as ``new_traversal``; or None if given up.
        :raises ConcurrentTransaction: if it kept losing races.
        :raises StackNotFound, NotSupported: if a concurrent operation
            (a delete) won the race and ``action`` may not follow it:
            the answer the request would have got after it.
        """
        resources = bound.resources if bound is not None else {}
        chosen = traversal
        for _ in range(_START_RETRIES):
            traversal = chosen or str(uuid.uuid4())
            now = models.utcnow()
            values = dict(
                extra or {},
                action=action,
                status=Status.IN_PROGRESS,
                status_reason="Stack %s started" % action,
                current_traversal=traversal,
                action_started_at=now,
            )
            if action != Action.CREATE:
                values["updated_at"] = now
            if goal_template_id is not None:
                values["raw_template_id"] = goal_template_id
            plan = planner.TraversalPlanner(
                stack["id"],
                goal_template_id,
                resources,
                keep_roles=action in KEEP_TEMPLATE,
                adopt=adopt,
                revert=revert,
            )
            event = stack_event(
                stack, action, Status.IN_PROGRESS, values["status_reason"]
            )
            log = _log_start(
                stack, action, traversal, requested_by, supersedes_as
            )
            log["queued"] = queued
            try:
                built = self._begin(
                    stack,
                    action,
                    values,
                    list(events) + log.pop("events") + [event],
                    plan,
                    new_template,
                    caller_token,
                    verify,
                    running,
                    log,
                    saved_plan,
                )
            except exception.ConcurrentTransaction:
                if not retry:
                    return None
                stack = db_stacks.stack_get(stack["id"])
                check_start(stack, action)
                continue
            if bound is not None and plan.goal_template_id is not None:
                definitions.remember(plan.goal_template_id, bound)
            notify.stack_event(dict(stack, **values), action, "start")
            self.dispatcher.cast(
                [(stack["id"], traversal, e, p) for e, p in built.leaves]
            )
            return dict(stack, new_traversal=traversal)
        raise exception.ConcurrentTransaction(what="stack %s" % stack["id"])

    @staticmethod
    def _begin(
        stack,
        action,
        values,
        events,
        plan,
        new_template,
        caller_token,
        verify=None,
        running=False,
        log=None,
        saved_plan=None,
    ):
        """The conditional write that starts the traversal (a seam the
        race tests use to commit another operation just before it)."""
        return db_traversals.traversal_begin(
            stack["id"],
            stack["current_traversal"],
            values,
            events,
            plan,
            new_template=new_template,
            caller_token=caller_token,
            refused_actions=tuple(states.refused_from(action)),
            verify=verify,
            running=running,
            log=log,
            plan=saved_plan,
        )

    def rollback(
        self,
        stack,
        events=(),
        caller_token=None,
        running=False,
        supersedes_as=T.FAILED,
        requested_by=None,
    ):
        """Converge back onto the last COMPLETE template (or nothing).

        Starts from the stack's current traversal and gives up if a newer
        operation has replaced it meanwhile (or, with ``running``, if it
        is no longer IN_PROGRESS). Without the ``caller_token``
        of a user who asked for it, the rollback acts with the token of
        the operation it rolls back.
        """
        if caller_token is None:
            caller_token = caller.kept(stack["current_traversal"])
        # Only ever started once from a given traversal (retry=False):
        # its id says which operation it rolls back.
        traversal = successor(stack["current_traversal"], ROLLBACK_STEP)
        if stack["prev_raw_template_id"]:
            template_id = stack["prev_raw_template_id"]
            bound = definitions.get(template_id, definitions.stack_info(stack))
            return self.start(
                stack,
                Action.ROLLBACK,
                bound,
                goal_template_id=template_id,
                events=events,
                retry=False,
                caller_token=caller_token,
                traversal=traversal,
                running=running,
                supersedes_as=supersedes_as,
                requested_by=requested_by,
            )
        current = db_templates.raw_template_get(stack["raw_template_id"])
        empty = {
            "heat_template_version": current["template"].get(
                "heat_template_version", "2013-05-23"
            )
        }
        # The environment without its parameters: the empty template
        # declares none, and a value of an undeclared parameter makes the
        # stored goal unbindable (the stack could no longer be shown).
        env = dict(current["environment"] or {}, parameters={})
        return self.start(
            stack,
            Action.ROLLBACK,
            None,
            events=events,
            new_template=(empty, env, {}),
            retry=False,
            caller_token=caller_token,
            traversal=traversal,
            running=running,
            supersedes_as=supersedes_as,
            requested_by=requested_by,
        )

    def run_action(self, stack, action, caller_token=None, requested_by=None):
        """Suspend (dependents first), resume or check every resource."""
        if (
            stack["action"] == action
            and stack["status"] == Status.COMPLETE
            and action in (Action.SUSPEND, Action.RESUME)
        ):
            return stack
        bound = None
        if action != Action.SUSPEND:
            bound = definitions.get(
                stack["raw_template_id"], definitions.stack_info(stack)
            )
        return self.start(
            stack,
            action,
            bound,
            goal_template_id=stack["raw_template_id"],
            caller_token=caller_token,
            requested_by=requested_by,
        )

    def cancel(self, stack, reason):
        """Stop the running traversal: nothing more is scheduled."""
        values = {
            "status": Status.FAILED,
            "status_reason": reason,
            "current_traversal": successor(
                stack["current_traversal"], CANCELLED_STEP
            ),
        }
        if db_traversals.stack_finish(
            stack["id"],
            stack["current_traversal"],
            values,
            [stack_event(stack, stack["action"], Status.FAILED, reason)],
            purge=True,
            log_state=T.CANCELLED,
        ):
            self.next_queued(stack)
            return True
        return False

    # Finishing -----------------------------------------------------------
    def begin_cleanup(self, stack_id, traversal):
        """The update phase is done: plan and start the cleanup phase
        (unless the traversal's verification holds it)."""
        if self.verifier is not None and self.verifier.holds(
            stack_id, traversal
        ):
            return []
        counts = {}
        state = db_stacks.stack_state(stack_id)
        if state is None:
            _not_here(stack_id, "barrier")
            return []
        action = state[1]

        def plan(records):
            if action in FORWARD_ONLY:
                records = []
            graph, found = planner.plan_cleanup(records)
            counts.update(found)
            return graph, found

        if db_traversals.cleanup_begin(stack_id, traversal, plan) is None:
            return []
        return [
            (stack_id, traversal, e, p)
            for e, p in planner.cleanup_leaves(counts)
        ]

    def mark_complete(self, stack_id, traversal):
        """The traversal finished: the stack is COMPLETE; purge."""
        try:
            stack = db_stacks.stack_get(stack_id)
        except exception.StackNotFound:
            _not_here(stack_id, "completion")
            return
        if (
            stack["current_traversal"] != traversal
            or stack["status"] != Status.IN_PROGRESS
        ):
            return
        action = stack["action"]
        if action == Action.DELETE and not stack["owner_id"]:
            try:
                trusts.delete(stack["trust_id"])
            except exception.HeatLiteException as exc:
                # Heat's rule: a trust that may still exist fails the
                # delete (deleting again tries again), never leaks.
                self.mark_failed(stack, "Error deleting trust: %s" % exc)
                return
        reason = "Stack %s completed successfully" % action
        if action == Action.SNAPSHOT and self.snapshots is not None:
            self.snapshots.finish(stack, traversal, Status.COMPLETE, reason)
        if action == Action.ROLLBACK and self.verifier is not None:
            reason += self.verifier.rollback_note(stack)
        values = {"status": Status.COMPLETE, "status_reason": reason}
        if action != Action.DELETE:
            values["prev_raw_template_id"] = stack["raw_template_id"]
        if db_traversals.stack_finish(
            stack_id,
            traversal,
            values,
            [stack_event(stack, action, Status.COMPLETE, reason)],
            purge=True,
            delete=action == Action.DELETE,
        ):
            notify.stack_event(stack, action, "end", reason=reason)
            self.next_queued(stack)

    def resource_failed(self, stack_id, traversal, record_id, reason):
        """A resource failed in ``traversal``: fail the stack (or, if a
        newer traversal runs, hand the record to it)."""
        stack = db_stacks.stack_get(stack_id)
        if stack["current_traversal"] != traversal:
            return self._runner_retrigger(record_id)
        self.mark_failed(stack, reason)
        return []

    def mark_failed(self, stack, reason):
        """Fail the running traversal; roll back if the stack wants it.

        With rollback the FAILED event and the rollback traversal are
        written in one transaction, so a client never sees the stack
        FAILED while a rollback is about to start.

        :returns: False if the stack was no longer running ``stack``'s
            traversal (another finish won): nothing was written.
        """
        action = stack["action"]
        failed = stack_event(stack, action, Status.FAILED, reason)
        if action == Action.SNAPSHOT and self.snapshots is not None:
            self.snapshots.finish(
                stack, stack["current_traversal"], Status.FAILED, reason
            )
        if not stack["disable_rollback"] and action in (
            Action.CREATE,
            Action.UPDATE,
        ):
            try:
                if self.rollback(stack, events=[failed], running=True):
                    notify.stack_event(stack, action, "error", reason=reason)
                    return True
                return False
            except Exception as exc:  # noqa: BLE001 - fail it, visibly
                # Whatever breaks the rollback must not keep the stack
                # IN_PROGRESS (and the watchdog re-failing it each tick).
                LOG.error(
                    "Rollback of stack %s could not start",
                    stack["id"],
                    exc_info=exc,
                )
                reason = "%s; rollback could not start: %s: %s" % (
                    reason,
                    type(exc).__name__,
                    exc,
                )
                failed = stack_event(stack, action, Status.FAILED, reason)
        values = {
            "status": Status.FAILED,
            "status_reason": reason,
            "current_traversal": successor(
                stack["current_traversal"], FAILED_STEP
            ),
        }
        if db_traversals.stack_finish(
            stack["id"],
            stack["current_traversal"],
            values,
            [failed],
            purge=True,
        ):
            notify.stack_event(stack, action, "error", reason=reason)
            self.next_queued(stack)
            return True
        return False

    def next_queued(self, stack):
        """A traversal of ``stack`` ended: start its next queued update
        (a stack whose semantics is ``queue``; any leftover is the
        watchdog's). Never fails the finish that calls it."""
        if self.queue is None or stack.get("update_semantics") != QUEUE:
            return
        try:
            self.queue.start_next(stack["id"])
        except Exception as exc:  # noqa: BLE001 - the watchdog retries
            LOG.error(
                "Queued update of stack %s could not start",
                stack["id"],
                exc_info=exc,
            )

    def _runner_retrigger(self, record_id):
        return self.dispatcher.runner.retrigger(record_id)


def _log_start(stack, action, traversal, requested_by, supersedes_as):
    """How the traversal log records a start on ``stack`` (as read before
    it): the running traversal it takes over, if any, and the event that
    says so (none for a rollback or a cancel: their events say it)."""
    log = {"action": action, "requested_by": requested_by, "events": []}
    if stack.get("status") != Status.IN_PROGRESS or not stack.get(
        "current_traversal"
    ):
        return log
    log["previous"] = stack["current_traversal"]
    log["previous_state"] = supersedes_as or T.SUPERSEDED
    if supersedes_as is None:
        log["events"].append(
            stack_event(
                stack,
                action,
                Status.IN_PROGRESS,
                "Traversal %s (%s) superseded by traversal %s (%s%s)"
                % (
                    stack["current_traversal"],
                    stack["action"],
                    traversal,
                    action,
                    ", by %s" % requested_by if requested_by else "",
                ),
            )
        )
    return log


def _not_here(stack_id, node):
    """A message for a stack this engine's database does not hold (a
    stack purged meanwhile, a message from another deployment on the same
    broker): nothing to do, said once, never an error."""
    LOG.warning(
        "Dropped the %s node of stack %s: no such stack in this database",
        node,
        stack_id,
    )
