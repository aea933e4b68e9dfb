"""Running rollouts: one thread per rollout this engine owns, and a
keeper that takes over the rollouts of engines that went down
(``keeper``).

A rollout's flow runs in a taskflow serial engine, in the rollout's
thread (its batch tasks run their targets at the same time), persisted
in our database (``db.flow_store``). The keeper looks every
``heartbeat_interval`` for active rollouts whose owner is no live
engine life -- claimed as dead after ``engine_life_check_timeout``,
stopped, or this engine's earlier life -- claims each (a conditional
write, one winner) and resumes its flow from the database: tasks that
had finished are not run again, a batch that was running runs again,
and each of its targets follows the update it had recorded (if any).
"""

import contextlib

from heat_lite.db import rollouts as db_rollouts
from heat_lite.engine.fleet import keeper
from heat_lite.engine.fleet.rollout import run as fleet_run


class RolloutRunner(keeper.KeptRunner):
    """The rollouts of one engine process.

    :param fence: the engine's ``fencing.Fence`` (its owner and lease).
    :param driver: the ``target.TargetDriver`` that updates the stacks.
    """

    label = "rollout"
    to_run = staticmethod(db_rollouts.rollouts_to_run)
    claim = staticmethod(db_rollouts.rollout_claim)

    def run(self, rollout_id):
        """Run the rollout's flow to its end, in this thread."""
        # taskflow (and networkx under it) costs about 0.3 s to import:
        # only an engine that runs a rollout pays it, not every start.
        import taskflow.engines
        import taskflow.exceptions

        from heat_lite.db import flow_store
        from heat_lite.engine.fleet.rollout import flows

        rollout = db_rollouts.rollout_get(rollout_id)
        run = fleet_run.RolloutRun(rollout, self.fence)
        targets = db_rollouts.targets_get([rollout_id])[rollout_id]
        flow = flows.get_rollout_flow(run, self.driver, targets)
        backend = flow_store.FencedBackend(run.check)
        book, detail = flow_store.flow_detail(
            backend, rollout_id, "rollout-%s" % rollout_id
        )
        engine = taskflow.engines.load(
            flow,
            flow_detail=detail,
            book=book,
            backend=backend,
            engine="serial",
        )
        if rollout["rollback_requested"] and _finished(engine):
            _reopen(engine)
        try:
            engine.run()
        except fleet_run.RollbackRequested:
            run.rolled_back()
        except taskflow.exceptions.WrappedFailure as failures:
            # A flow resumed while it was reverting holds the failure of
            # the run that began the revert too: taskflow re-raises both.
            if not all(f.check(fleet_run.RollbackRequested) for f in failures):
                raise
            run.rolled_back()
        finally:
            with contextlib.suppress(Exception):
                backend.close()


def _finished(engine):
    from taskflow import states

    return engine.storage.get_flow_state() == states.SUCCESS


def _reopen(engine):
    """A finished flow asked to roll back: run ``finish`` again (it
    raises RollbackRequested, and taskflow reverts the flow)."""
    from taskflow import states

    from heat_lite.engine.fleet.rollout import flows

    engine.compile()
    engine.storage.set_atom_state(flows.FINISH, states.PENDING)
    engine.storage.set_flow_state(states.RUNNING)
