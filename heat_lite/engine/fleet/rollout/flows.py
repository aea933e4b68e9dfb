"""The rollout's taskflow flow, made by a factory function.

``get_rollout_flow`` builds, from a rollout's targets::

    linear: gate-0, batch-0,   # the canary batch
            gate-1, batch-1,   # then batch after batch
            ...
            finish

Each gate waits while the rollout is paused and decides whether its
batch starts (``run.gate``); each batch task updates its stacks at the
same time (``target.TargetDriver.update``) and, when the flow is
reverted (the rollout is rolled back), updates back those that had
succeeded (a thread each, at most ``MAX_WORKERS``); ``finish`` settles
the rollout. A rollback of the rollout is a revert of the flow: the gate
or ``finish`` that sees it raises ``RollbackRequested`` and taskflow
reverts every batch that ran, in reverse order. A target that fails does
*not* fail its batch: only that stack is rolled back (by the verified
update itself), and the gates count the failures.

One task per batch, not per target: taskflow saves every state change of
an atom (RUNNING, SUCCESS), a read, a write and a commit each, which was
most of the rollout's own cost per target. Each target's progress is in
our target rows (``target``): a batch resumed after its engine died runs
its targets again, and each one finished is left as it is, one started
is followed, so none is updated twice.
"""

import concurrent.futures

from taskflow import task
from taskflow.patterns import linear_flow

from heat_lite.engine.fleet.keeper import OwnershipLost
from heat_lite.engine.fleet.rollout.run import RollbackRequested

__all__ = ["RollbackRequested", "get_rollout_flow"]

FINISH = "finish"
# Threads of one batch at most (a wider batch runs in waves).
MAX_WORKERS = 64


class BatchGate(task.Task):
    """Before batch ``batch``: wait while paused; True if it starts."""

    def __init__(self, run, batch):
        super().__init__(name="gate-%d" % batch, provides="go-%d" % batch)
        self.run = run
        self.batch = batch

    def execute(self):
        return self.run.gate(self.batch)


class UpdateBatch(task.Task):
    """Update the targets of one batch; its revert updates them back."""

    def __init__(self, run, driver, positions, batch):
        super().__init__(
            name="batch-%d" % batch, rebind={"go": "go-%d" % batch}
        )
        self.run = run
        self.driver = driver
        self.positions = positions

    def execute(self, go):
        # Nothing is returned: taskflow would store it, and the targets'
        # statuses are in their rows.
        if not go:
            self.run.skip(self.positions)
            return
        self.driver.update(self.run, self.positions)

    def revert(self, go, result=None, **kwargs):
        # Only a SUCCEEDED target is updated back (``driver.revert``
        # leaves the others as they are).
        _each(self.driver.revert, self.run, self.positions)


def _each(act, run, positions):
    """``act(run, position)`` for every position at the same time; once
    all are over, the first error (if any) is raised, OwnershipLost
    first (the flow stops without reverting anything)."""
    width = min(len(positions), MAX_WORKERS)
    if width <= 1:
        for position in positions:
            act(run, position)
        return
    with concurrent.futures.ThreadPoolExecutor(
        width, thread_name_prefix="heat-lite-rollout-%s" % run.id[:8]
    ) as pool:
        futures = [pool.submit(act, run, p) for p in positions]
    errors = [f.exception() for f in futures if f.exception() is not None]
    errors.sort(key=lambda e: not isinstance(e, OwnershipLost))
    if errors:
        raise errors[0]


class Finish(task.Task):
    """Settle the rollout (or start its rollback)."""

    def __init__(self, run):
        super().__init__(name=FINISH)
        self.run = run

    def execute(self):
        self.run.finish()


def get_rollout_flow(run, driver, targets):
    """The flow of a rollout over ``targets`` (rows with position and
    batch, in position order)."""
    flow = linear_flow.Flow("rollout-%s" % run.id)
    batches = {}
    for target in targets:
        batches.setdefault(target["batch"], []).append(target["position"])
    for batch in sorted(batches):
        flow.add(BatchGate(run, batch))
        flow.add(UpdateBatch(run, driver, batches[batch], batch))
    flow.add(Finish(run))
    return flow
