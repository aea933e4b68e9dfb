"""The rollout's taskflow flow, made by a factory function.

``get_rollout_flow`` builds, from a rollout's targets::

    linear: gate-0, unordered(target-0 ...),   # the canary batch
            gate-1, unordered(target-k ...),   # then batch after batch
            ...
            finish

Each gate waits while the rollout is paused and decides whether its
batch starts (``run.gate``); each target task updates one stack and, when
the flow is reverted (the rollout is rolled back), updates it back if it
had succeeded; ``finish`` settles the rollout. A rollback of the rollout
is a revert of the flow: the gate or ``finish`` that sees it raises
``RollbackRequested`` and taskflow reverts every target task that ran, in
reverse order. A target that fails does *not* fail its task: only that
stack is rolled back (by the verified update itself), and the gates count
the failures.
"""

from taskflow import task
from taskflow.patterns import linear_flow, unordered_flow

from heat_lite.engine.fleet.run import RollbackRequested

__all__ = ["RollbackRequested", "get_rollout_flow"]

FINISH = "finish"


class BatchGate(task.Task):
    """Before batch ``batch``: wait while paused; True if it starts."""

    def __init__(self, run, batch):
        super().__init__(name="gate-%d" % batch, provides="go-%d" % batch)
        self.run = run
        self.batch = batch

    def execute(self):
        return self.run.gate(self.batch)


class UpdateTarget(task.Task):
    """Update one target stack; its revert updates it back."""

    def __init__(self, run, driver, position, batch):
        super().__init__(
            name="target-%d" % position, rebind={"go": "go-%d" % batch}
        )
        self.run = run
        self.driver = driver
        self.position = position

    def execute(self, go):
        if not go:
            return self.run.skip(self.position)
        return self.driver.update(self.run, self.position)

    def revert(self, go, result=None, **kwargs):
        # Only a task that ran to its end has a status as result; one
        # reverted mid-way (not here: gates stop before batches) has none.
        if isinstance(result, str):
            self.driver.revert(self.run, self.position)


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
        group = unordered_flow.Flow("batch-%d" % batch)
        for position in batches[batch]:
            group.add(UpdateTarget(run, driver, position, batch))
        flow.add(group)
    flow.add(Finish(run))
    return flow
