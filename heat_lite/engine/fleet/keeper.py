"""Threads for the fleet's long-running flows, and the keeper that takes
over those of engines that went down (rollouts, promotions alike).

One thread per flow this engine owns. The keeper looks every
``heartbeat_interval`` for active rows whose owner is no live engine
life -- claimed as dead after ``engine_life_check_timeout``, stopped, or
this engine's earlier life -- claims each (a conditional write, one
winner) and resumes its flow from the database.
"""

import logging
import threading

from heat_lite import conf
from heat_lite.db import api as db_api

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# Flows of one kind that run at once in one engine process; the others
# wait for a slot without touching the database (a hundred promotions
# at once would otherwise be a hundred pollers and as many connections).
MAX_RUNNING = 32


class OwnershipLost(Exception):
    """This engine no longer owns the flow (its row): stop acting on it."""


# Never set: what a flow of a stopping engine waits on (``hold``).
_EXIT = threading.Event()


def hold(fence):
    """Hold the calling flow thread until the process exits if its engine
    is stopping (``fence.retiring``).

    A stopping engine leaves its flows where its store has them, for the
    engine that takes them over: a flow whose ownership check raised
    instead would have taskflow record that failure -- a write the
    fenced store refuses, which taskflow logs as an ERROR -- and start
    reverting. Called by the flows' ownership checks, before any write
    and outside any transaction, so a held thread holds no lock.
    """
    if fence.retiring:
        _EXIT.wait()


class Keeper:
    """The flows of one kind (``label``) that one engine process runs.

    :param fence: the engine's ``fencing.Fence`` (its owner and lease).
    :param label: "rollout" or "promotion" (logs, thread names).
    :param to_run: ``to_run(engine_id)`` -> rows {id, engine_id, epoch}
        that no live engine runs.
    :param claim: ``claim(id, seen, owner)`` -> True if claimed.
    :param run: ``run(id)`` runs one flow to its end, in the caller's
        thread; raises ``OwnershipLost`` once no longer owned.
    :param max_running: flows that run at once (the others wait).
    """

    def __init__(self, fence, label, to_run, claim, run, max_running=None):
        self.fence = fence
        self.label = label
        self._to_run = to_run
        self._claim = claim
        self._run = run
        self._running = {}
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_running or MAX_RUNNING)
        self._stop = threading.Event()

    def start(self):
        threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-%ss" % self.label
        ).start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        while not self._stop.wait(CONF.engine.heartbeat_interval):
            try:
                self.take_over()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_api.is_unavailable(exc):
                    LOG.exception("%s keeper pass failed", self.label)

    def take_over(self):
        """Claim and resume the flows no live engine runs; returns their
        ids (for tests)."""
        if not self.fence.lease_valid():
            return []
        resumed = []
        owner = self.fence.owner
        for row in self._to_run(self.fence.engine_id):
            if self.running(row["id"]):
                continue
            seen = (row["engine_id"], row["epoch"])
            if seen != owner and not self._claim(row["id"], seen, owner):
                continue
            # (One just created here is being launched by its call.)
            if self.launch(row["id"]) is not None:
                LOG.info(
                    "Engine %s resumes %s %s", owner[0], self.label, row["id"]
                )
                resumed.append(row["id"])
        return resumed

    def active(self):
        """How many flows have a live thread here (running or waiting
        for a slot)."""
        with self._lock:
            return sum(t.is_alive() for t in self._running.values())

    def running(self, row_id):
        thread = self.thread(row_id)
        return thread is not None and thread.is_alive()

    def thread(self, row_id):
        """The thread that runs (or last ran) the flow of ``row_id``
        here, or None: a caller that must see one run end waits for its
        thread, since the keeper may start the next one at once."""
        with self._lock:
            return self._running.get(row_id)

    def launch(self, row_id):
        """Run (or resume) a flow this engine owns, on its own thread;
        None if it runs here already. The check and the start are one
        step: the keeper's pass and the call that created the row may
        launch it at the same moment, and two flows of one row would
        act on its targets twice."""
        with self._lock:
            thread = self._running.get(row_id)
            if thread is not None and thread.is_alive():
                return None
            thread = threading.Thread(
                target=self._run_logged,
                args=(row_id,),
                daemon=True,
                name="heat-lite-%s-%s" % (self.label, row_id[:8]),
            )
            self._running[row_id] = thread
            thread.start()
        return thread

    def _run_logged(self, row_id):
        try:
            with self._slots:
                self._run(row_id)
        except OwnershipLost:
            LOG.info("%s %s: no longer owned here", self.label, row_id)
        except Exception:  # noqa: BLE001 - the keeper resumes it
            LOG.exception("%s %s stopped on an error", self.label, row_id)


class KeptRunner:
    """What a runner of one kind of flow exposes (the keeper's start,
    stop, take_over, running and launch), with ``run(id)`` its own.

    :param fence: the engine's ``fencing.Fence``.
    :param driver: what acts on the stacks (the kind's driver).
    """

    label = None
    to_run = claim = None  # the kind's db functions, set by subclasses

    def __init__(self, fence, driver):
        self.fence = fence
        self.driver = driver
        self.keeper = Keeper(
            fence, self.label, type(self).to_run, type(self).claim, self.run
        )
        self.start = self.keeper.start
        self.stop = self.keeper.stop
        self.take_over = self.keeper.take_over
        self.running = self.keeper.running
        self.thread = self.keeper.thread
        self.launch = self.keeper.launch

    def run(self, row_id):
        raise NotImplementedError
