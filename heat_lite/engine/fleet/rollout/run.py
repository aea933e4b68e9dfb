"""One rollout as its owner engine runs it: the decisions between
batches (pause, cancel, rollback, canary and ``max_failures``) and the
rollout's final state. Every write is conditional on the owner.
"""

import collections
import threading
import time

from heat_lite.common import context, states
from heat_lite.db import models
from heat_lite.db import rollouts as db_rollouts
from heat_lite.engine.fleet import keeper
from heat_lite.engine.fleet.rollout import target as tgt

R = states.ROLLOUT


class RollbackRequested(Exception):
    """The user asked to roll the whole rollout back."""


# Seconds between two looks at a paused rollout, and between two checks
# that this engine still owns it.
PAUSE_POLL = 0.5
OWNER_CHECK = 0.5


def summary(counts):
    """ "3 SUCCEEDED, 1 ROLLED_BACK" of {status: n}, in state order."""
    return ", ".join(
        "%d %s" % (counts[s], s) for s in tgt.STATES if counts.get(s)
    )


class RolloutRun:
    """The owner-side state of one rollout.

    :param rollout: the rollout row (spec decoded).
    :param fence: the engine's ``fencing.Fence``; its owner is recorded on
        the rollout.
    """

    def __init__(self, rollout, fence):
        self.id = rollout["id"]
        self.spec = rollout["spec"]
        self.caller_token = rollout["caller_token"]
        self.fence = fence
        self.owner = fence.owner
        self.generation = fence.generation
        self.context = context.RequestContext(
            project_id=rollout["tenant"], overwrite=False
        )
        self._checked = 0.0
        self._lost = False
        self._lock = threading.Lock()

    # Ownership -----------------------------------------------------------
    def check(self):
        """Raise OwnershipLost once this engine no longer owns the rollout
        (fenced, stopping, or claimed by another engine)."""
        if self.fence.generation != self.generation:
            keeper.hold(self.fence)
            raise keeper.OwnershipLost(self.id)
        with self._lock:
            if self._lost:
                raise keeper.OwnershipLost(self.id)
            if time.monotonic() - self._checked < OWNER_CHECK:
                return
            self._checked = time.monotonic()
        if not db_rollouts.rollout_owned(self.id, self.owner):
            self.lost()
            raise keeper.OwnershipLost(self.id)

    def lost(self):
        """Once lost, every later check raises: the failure taskflow
        records for the step that found the loss (a write the
        rate-limited check would otherwise let through within
        ``OWNER_CHECK``) must not reach the store, or the flow that
        takes over finds that batch failed and reverts it."""
        with self._lock:
            self._lost = True

    # Between batches -----------------------------------------------------
    def gate(self, batch):
        """Whether ``batch`` starts: waits while the rollout is paused.

        :raises RollbackRequested: if the rollout is to be rolled back.
        """
        while True:
            self.check()
            rollout = db_rollouts.rollout_get(self.id)
            if rollout["rollback_requested"]:
                raise RollbackRequested(self.id)
            if self.stop_reason(rollout, batch) is not None:
                return False
            if rollout["status"] != R.PAUSED:
                return True
            time.sleep(PAUSE_POLL)

    def stop_reason(self, rollout, batch=None):
        """Why no further batch starts (None: they do)."""
        if rollout["cancel_requested"]:
            return "cancelled"
        targets = db_rollouts.targets_get([self.id])[self.id]
        failed = [t for t in targets if t["status"] in tgt.FAILURES]
        strategy = self.spec["strategy"]
        canary = [t for t in failed if t["batch"] == 0]
        if strategy["canary"] and canary and batch != 0:
            return "canary failed: stack %s: %s" % (
                canary[0]["stack_name"],
                canary[0]["status_reason"],
            )
        if len(failed) > strategy["max_failures"]:
            return "%d targets failed (max_failures %d)" % (
                len(failed),
                strategy["max_failures"],
            )
        return None

    def skip(self, positions):
        """The targets of a batch that does not start."""
        rollout = db_rollouts.rollout_get(self.id)
        reason = self.stop_reason(rollout) or "rollout stopped"
        db_rollouts.targets_skip_pending(
            self.id, self.owner, "not started: %s" % reason, positions
        )

    # The end -------------------------------------------------------------
    def finish(self):
        """Settle the rollout: COMPLETE, FAILED or CANCELLED.

        :raises RollbackRequested: if it is to be rolled back instead.
        """
        self.check()
        rollout = db_rollouts.rollout_get(self.id)
        if rollout["rollback_requested"]:
            raise RollbackRequested(self.id)
        reason = self.stop_reason(rollout)
        if reason is not None:
            db_rollouts.targets_skip_pending(
                self.id, self.owner, "not started: %s" % reason
            )
        counts = db_rollouts.target_counts(self.id)
        if rollout["cancel_requested"]:
            status = R.CANCELLED
        elif reason is not None:
            status = R.FAILED
        else:
            status = R.COMPLETE
        text = summary(counts)
        reason = "%s: %s" % (reason, text) if reason else text
        if not self._settle(status, reason, unless="rollback_requested"):
            # A rollback asked for since the look above wins.
            self.check()
            raise RollbackRequested(self.id)

    def rolled_back(self):
        """After the flow was reverted: CANCELLED, or FAILED if a target
        could not be updated back."""
        targets = db_rollouts.targets_get([self.id])[self.id]
        counts = collections.Counter(t["status"] for t in targets)
        stuck = [
            t
            for t in targets
            if t["revert_traversal_id"] and t["status"] == tgt.FAILED
        ]
        status = R.FAILED if stuck else R.CANCELLED
        # Rolled back, it can bring no image back again (the targets'
        # records name the old ones now; a target that could not go back
        # still names them itself): its holds go with the final status.
        written = db_rollouts.rollout_settle_rolled_back(
            self.id,
            self.owner,
            {
                "status": status,
                "status_reason": "rolled back: %s" % summary(counts),
                "finished_at": models.utcnow(),
            },
        )
        if not written:
            raise keeper.OwnershipLost(self.id)

    def _settle(self, status, reason, unless=None):
        written = db_rollouts.rollout_update_owned(
            self.id,
            self.owner,
            {
                "status": status,
                "status_reason": reason,
                "finished_at": models.utcnow(),
            },
            unless,
        )
        if not written and unless is None:
            raise keeper.OwnershipLost(self.id)
        return written
