"""Verified creates and updates: checks between the update phase and the
cleanup phase of a traversal.

A traversal started with a ``verify`` document (``common.verify_spec``)
has a ``verification`` row and a flag in its graph. When its update phase
converges (the barrier fires) the cleanup phase is held: the stack stays
``<ACTION>_IN_PROGRESS`` with a reason saying it is verifying, and the
replaced records are still there. The checks are polled on the engine's
scheduler (never a sleeping worker thread):

* ``output``: the output, resolved against the current records, equals
  the expected value (re-read until it does, or the timeout);
* ``signal``: a verdict (``POST .../verdict``) said PASS; FAIL fails.

All pass: the cleanup phase starts and the stack completes. A failure or
the timeout: the stack fails with the failing check in the reason and an
event, and rolls back (an update always; a create as a failed create
does), reviving the replaced records. Everything is in the database: a
verification whose engine died is re-driven by the watchdog (the
barrier is a join it drives on a stalled stack), and any engine resumes
polling it. A newer update or a cancel makes the traversal stale: the
polling stops at its next look.

For callers inside the engine (rollouts), ``StackOps.start(...,
verify=spec)`` returns the new traversal's id, and ``outcome(stack_id,
traversal)`` reads from the database what became of it.
"""

import logging
import threading

from heat_lite.common import exception, verify_spec
from heat_lite.common.states import VERIFICATION as V
from heat_lite.common.states import Action, Status
from heat_lite.db import models, verifications
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions
from heat_lite.engine.traversal import ops

LOG = logging.getLogger(__name__)

# Seconds between two looks at a running verification (outputs re-read,
# verdict, timeout). Small: a look is one or two reads.
POLL_SECONDS = 1.0
PASS, FAIL = "PASS", "FAIL"
# A rollback that starts within this many seconds of a verification's
# FAIL is the one that failure started.
_ROLLBACK_GAP = 60


def checks_text(spec):
    return ", ".join(verify_spec.describe(c) for c in spec["checks"])


class Verifier:
    """Holds and runs the verifications of one engine process.

    :param ops: the process's ``StackOps`` (cleanup, failure, rollback).
    :param graphs: the ``GraphCache`` (says which traversals verify
        without a query).
    :param dispatcher: schedules the looks and drives what they return.
    :param services: the plugins' services (outputs are resolved with
        them: ``definitions.resolve_outputs``).
    """

    def __init__(self, ops, graphs, dispatcher, services):
        self.ops = ops
        self.graphs = graphs
        self.dispatcher = dispatcher
        self.services = services
        # Traversals this process has a look scheduled for.
        self._scheduled = set()
        self._lock = threading.Lock()

    # Called by StackOps.begin_cleanup ------------------------------------
    def holds(self, stack_id, traversal):
        """True if the cleanup phase of ``traversal`` must wait (its
        verification runs or failed); starts (or resumes) the checks."""
        if not self.graphs.verified(traversal):
            return False
        row = verifications.verification_get(traversal)
        if row is None or row["result"] == PASS:
            return False
        if row["result"] == FAIL:
            self._failed(stack_id, traversal, row)
            return True
        if row["started_at"] is None and not self._start(
            stack_id, traversal, row
        ):
            return True
        self.schedule(stack_id, traversal, 0)
        return True

    def _start(self, stack_id, traversal, row):
        stack = db_stacks.stack_get(stack_id)
        action = stack["action"]
        reason = "Stack %s verifying: %s (timeout %d s)" % (
            action,
            checks_text(row["spec"]),
            row["spec"]["timeout"],
        )
        return verifications.verification_start(
            stack_id,
            traversal,
            {"status_reason": reason},
            ops.stack_event(stack, action, Status.IN_PROGRESS, reason),
        )

    # Polling -------------------------------------------------------------
    def schedule(self, stack_id, traversal, delay=POLL_SECONDS):
        """Look at the verification after ``delay`` s (once per process)."""
        with self._lock:
            if traversal in self._scheduled:
                return
            self._scheduled.add(traversal)
        self.dispatcher.later(delay, lambda: self._look(stack_id, traversal))

    def _look(self, stack_id, traversal):
        with self._lock:
            self._scheduled.discard(traversal)
        state = db_stacks.stack_state(stack_id)
        if (
            state is None
            or state[0] != traversal
            or state[2] != Status.IN_PROGRESS
        ):
            return []  # superseded, cancelled, timed out or deleted
        row = verifications.verification_get(traversal)
        if row is None or row["started_at"] is None:
            return []
        if row["result"] == PASS:
            return self.ops.begin_cleanup(stack_id, traversal)
        if row["result"] == FAIL:
            return self._failed(stack_id, traversal, row)
        stack = db_stacks.stack_get(stack_id)
        result, reason = self._evaluate(stack, row)
        if result is None:
            self.schedule(stack_id, traversal)
            return []
        return self._decide(stack, traversal, result, reason)

    def _evaluate(self, stack, row):
        """(PASS | FAIL | None, reason) of the checks right now."""
        pending, outputs = [], None
        for check in row["spec"]["checks"]:
            if check["type"] == "signal":
                verdict = row["verdict"]
                if verdict is None:
                    pending.append(check)
                elif verdict["status"] == FAIL:
                    return FAIL, "check signal failed: %s" % (
                        verdict["reason"] or "FAIL"
                    )
                continue
            if outputs is None:
                outputs = _outputs(stack, self.services)
            name = check["output"]
            if name not in outputs:
                return FAIL, "check %s failed: no output %s" % (
                    verify_spec.describe(check),
                    name,
                )
            if outputs[name] != check["equals"]:
                pending.append(check)
        if not pending:
            return PASS, "all checks passed: %s" % checks_text(row["spec"])
        return _unless_timed_out(row, pending, outputs)

    def _decide(self, stack, traversal, result, reason):
        action = stack["action"]
        if result == PASS:
            text = "Stack %s verified: %s" % (action, reason)
            event = ops.stack_event(stack, action, Status.IN_PROGRESS, text)
            values = {"status_reason": text}
        else:
            event = values = None
        if not verifications.verification_decide(
            stack["id"], traversal, result, reason, values, event
        ):
            return []  # someone else decided it: it acts on it
        LOG.info("Stack %s verification %s: %s", stack["id"], result, reason)
        if result == PASS:
            return self.ops.begin_cleanup(stack["id"], traversal)
        row = verifications.verification_get(traversal)
        return self._failed(stack["id"], traversal, row)

    def _failed(self, stack_id, traversal, row):
        """Fail the stack of a FAILed verification and roll it back (an
        update always; a create as its ``disable_rollback`` says)."""
        stack = db_stacks.stack_get(stack_id)
        if (
            stack["current_traversal"] != traversal
            or stack["status"] != Status.IN_PROGRESS
        ):
            return []
        if stack["action"] == Action.UPDATE:
            stack = dict(stack, disable_rollback=False)
        self.ops.mark_failed(stack, "Verification failed: %s" % row["reason"])
        return []

    @staticmethod
    def rollback_note(stack):
        """What a completed rollback says about the failed verification
        that started it ("" if none did): that verification was decided
        FAIL just before the rollback started."""
        rows = verifications.verifications_of_stack(stack["id"])
        if not rows or rows[-1]["result"] != FAIL:
            return ""
        gap = stack["action_started_at"] - rows[-1]["finished_at"]
        if not 0 <= gap.total_seconds() < _ROLLBACK_GAP:
            return ""
        return " after verification failed: %s" % rows[-1]["reason"]

    # The verdict ---------------------------------------------------------
    def signal(self, stack, status, reason):
        """Record a test runner's verdict on the stack's verification.

        :raises StackNotVerifying: if the stack is not verifying, waits
            for no signal or has its verdict already.
        """
        status, reason = verify_spec.verdict(status, reason)
        traversal = stack["current_traversal"]
        row = (
            verifications.verification_get(traversal)
            if stack["status"] == Status.IN_PROGRESS
            else None
        )
        why = _not_verifying(row)
        if why is None and not verifications.verification_signal(
            traversal, status, reason
        ):
            why = "it has a verdict already"
        if why is not None:
            raise exception.StackNotVerifying(name=stack["name"], reason=why)
        self.schedule(stack["id"], traversal, 0)


def _unless_timed_out(row, pending, outputs):
    """(None, None) while the checks have time left, else the FAIL that
    names the ``pending`` checks (and the outputs' values seen)."""
    timeout = row["spec"]["timeout"]
    if (models.utcnow() - row["started_at"]).total_seconds() < timeout:
        return None, None
    waiting = ", ".join(verify_spec.describe(c) for c in pending)
    if outputs is not None:
        waiting += _seen(pending, outputs)
    return FAIL, "timed out after %d s waiting for %s" % (timeout, waiting)


def _not_verifying(row):
    if row is None or row["started_at"] is None:
        return "no verification is running"
    if row["result"] is not None:
        return "its verification is decided"
    if not any(c["type"] == "signal" for c in row["spec"]["checks"]):
        return "its verification waits for no signal"
    if row["verdict"] is not None:
        return "it has a verdict already"
    return None


def _outputs(stack, services):
    """{output name: value} of the stack now (errors read as None)."""
    return {
        o["output_key"]: o.get("output_value")
        for o in definitions.resolve_outputs(stack, services)
    }


def _seen(pending, outputs):
    seen = [
        "%s is %s"
        % (c["output"], verify_spec.describe_value(outputs[c["output"]]))
        for c in pending
        if c["type"] == "output"
    ]
    return " (%s)" % ", ".join(seen) if seen else ""


# For callers inside the engine (rollouts) ---------------------------------
def outcome(stack_id, traversal, stack=None, verified=True):
    """What became of the verified operation ``traversal`` of a stack
    (with ``verified=False``: of an operation started without checks,
    which succeeds when it completes).

    :param stack: the stack's ``current_traversal``, ``status``,
        ``status_reason`` and ``deleted_at`` if the caller has just read
        them (None: read here).

    The ends of a traversal give the stack ids derived from it
    (``ops.successor``), so its own failure, cancel or rollback is told
    apart from a later operation's.

    :returns: ``{"state", "reason"}`` where state is one of UPDATING (the
        update phase runs), VERIFYING, CLEANING_UP (passed, old records
        being deleted), SUCCEEDED, ROLLING_BACK, ROLLED_BACK (this
        update failed, or was cancelled with rollback, and the stack is
        back on its previous template), FAILED (this update failed or
        was cancelled without rollback, or its rollback failed),
        SUPERSEDED_AFTER_PASS (its checks passed, then another operation
        took the stack over during the cleanup), SUPERSEDED (another
        operation took the stack over before the checks passed) or
        DELETED. Once a later operation has replaced this update's own
        rollback or failure, that is all it can say: SUPERSEDED.
    """
    row = verifications.verification_get(traversal) if verified else None
    if stack is None:
        try:
            stack = db_stacks.stack_get(stack_id)
        except exception.StackNotFound:
            return {"state": V.DELETED, "reason": None}
    if stack["deleted_at"] is not None:
        return {"state": V.DELETED, "reason": stack["status_reason"]}
    if row is None and not verified:
        # Decided by the stack alone: completed under this traversal.
        row = {"result": PASS if stack["status"] == Status.COMPLETE else None}
        row.update(reason=None, started_at=None)
        if stack["current_traversal"] != traversal:
            row["result"] = None
    if row is None:
        return {"state": V.SUPERSEDED, "reason": None}
    current = stack["current_traversal"]
    if current == traversal:
        # Still running, or complete after a PASS.
        if row["result"] == PASS:
            done = stack["status"] == Status.COMPLETE
            state = V.SUCCEEDED if done else V.CLEANING_UP
            return {"state": state, "reason": row["reason"]}
        state = V.VERIFYING if row["started_at"] is not None else V.UPDATING
        return {"state": state, "reason": stack["status_reason"]}
    # A failed verification's reason names the failing check; any other
    # end (a resource failed, a cancel) is in the stack's reason.
    reason = row["reason"] if row["result"] == FAIL else stack["status_reason"]
    state = ops.end_of(traversal, current, stack["status"])
    if state is not None:
        return {"state": state, "reason": reason}
    if row["result"] == PASS:
        return {"state": V.SUPERSEDED_AFTER_PASS, "reason": row["reason"]}
    return {"state": V.SUPERSEDED, "reason": stack["status_reason"]}
