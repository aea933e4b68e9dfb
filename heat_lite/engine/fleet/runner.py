"""Running rollouts: one thread per rollout this engine owns, and a
keeper that takes over the rollouts of engines that went down.

A rollout's flow runs in a taskflow parallel engine (a thread per
target of the widest batch) persisted in our database
(``db.flow_store``). The keeper looks every ``heartbeat_interval`` for
active rollouts whose owner is no live engine life -- claimed as dead
after ``engine_life_check_timeout``, stopped, or this engine's earlier
life -- claims each (a conditional write, one winner) and resumes its
flow from the database: tasks that had finished are not run again, a
target task that was running follows the update it had recorded.
"""

import collections
import contextlib
import logging
import threading

from heat_lite import conf
from heat_lite.db import api as db_api
from heat_lite.db import rollouts as db_rollouts
from heat_lite.engine.fleet import run as fleet_run
from heat_lite.engine.fleet import target as tgt

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# Threads of one rollout's taskflow engine at most (a batch wider than
# this runs in waves).
MAX_WORKERS = 64


class RolloutRunner:
    """The rollouts of one engine process.

    :param fence: the engine's ``fencing.Fence`` (its owner and lease).
    :param driver: the ``target.TargetDriver`` that updates the stacks.
    """

    def __init__(self, fence, driver):
        self.fence = fence
        self.driver = driver
        self._running = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    # The keeper ----------------------------------------------------------
    def start(self):
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-rollouts"
        )
        self._thread.start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        while not self._stop.wait(CONF.engine.heartbeat_interval):
            try:
                self.take_over()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_api.is_unavailable(exc):
                    LOG.exception("Rollout keeper pass failed")

    def take_over(self):
        """Claim and resume the rollouts no live engine runs; returns
        their ids (for tests)."""
        if not self.fence.lease_valid():
            return []
        resumed = []
        owner = self.fence.owner
        for row in db_rollouts.rollouts_to_run(self.fence.engine_id):
            if self.running(row["id"]):
                continue
            seen = (row["engine_id"], row["epoch"])
            if seen != owner and not db_rollouts.rollout_claim(
                row["id"], seen, owner
            ):
                continue
            # (A rollout just created here is being launched by its call.)
            if self.launch(row["id"]) is not None:
                LOG.info("Engine %s resumes rollout %s", owner[0], row["id"])
                resumed.append(row["id"])
        return resumed

    # Running one ---------------------------------------------------------
    def running(self, rollout_id):
        with self._lock:
            thread = self._running.get(rollout_id)
            return thread is not None and thread.is_alive()

    def launch(self, rollout_id):
        """Run (or resume) a rollout this engine owns, on its own thread;
        None if it runs here already. The check and the start are one
        step: the keeper's pass and the call that created the rollout
        may launch it at the same moment, and two flows of one rollout
        would update its targets twice."""
        with self._lock:
            thread = self._running.get(rollout_id)
            if thread is not None and thread.is_alive():
                return None
            thread = threading.Thread(
                target=self._run_logged,
                args=(rollout_id,),
                daemon=True,
                name="heat-lite-rollout-%s" % rollout_id[:8],
            )
            self._running[rollout_id] = thread
            thread.start()
        return thread

    def _run_logged(self, rollout_id):
        try:
            self.run(rollout_id)
        except tgt.OwnershipLost:
            LOG.info("Rollout %s: no longer owned by this engine", rollout_id)
        except Exception:  # noqa: BLE001 - the keeper resumes it
            LOG.exception("Rollout %s stopped on an error", rollout_id)

    def run(self, rollout_id):
        """Run the rollout's flow to its end, in this thread."""
        # taskflow (and networkx under it) costs about 0.3 s to import:
        # only an engine that runs a rollout pays it, not every start.
        import taskflow.engines

        from heat_lite.db import flow_store
        from heat_lite.engine.fleet import flows

        rollout = db_rollouts.rollout_get(rollout_id)
        run = fleet_run.RolloutRun(rollout, self.fence)
        targets = db_rollouts.targets_get([rollout_id])[rollout_id]
        flow = flows.get_rollout_flow(run, self.driver, targets)
        backend = flow_store.FencedBackend(run.check)
        book, detail = flow_store.flow_detail(
            backend, rollout_id, "rollout-%s" % rollout_id
        )
        widths = collections.Counter(t["batch"] for t in targets)
        workers = max(widths.values(), default=1)
        engine = taskflow.engines.load(
            flow,
            flow_detail=detail,
            book=book,
            backend=backend,
            engine="parallel",
            max_workers=min(workers, MAX_WORKERS),
        )
        if rollout["rollback_requested"] and _finished(engine):
            _reopen(engine)
        try:
            engine.run()
        except fleet_run.RollbackRequested:
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

    from heat_lite.engine.fleet import flows

    engine.compile()
    engine.storage.set_atom_state(flows.FINISH, states.PENDING)
    engine.storage.set_flow_state(states.RUNNING)
