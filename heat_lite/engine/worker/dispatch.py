"""Drive graph nodes: run locally what follows, cast what fans out.

A worker that finishes a node usually makes its successor ready; running
that successor in the same thread (local continuation) saves a message
and a queue wait per step of a chain. When several nodes become ready at
once, all but one are cast to the worker topic in batches so any engine
process can take them. Polled resource actions wait on a timer, never in a
worker thread.
"""

import collections
import heapq
import itertools
import logging
import threading
import time
import typing
from concurrent import futures

from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import session as db_session
from heat_lite.engine.traversal.planner import CLEANUP

if typing.TYPE_CHECKING:  # the runner schedules through this module
    from heat_lite.engine import rpcapi
    from heat_lite.engine.worker import runner as runner_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# How long a node that met an unreachable database waits to run again.
DB_RETRY_SECONDS = 1.0


class Scheduler:
    """Runs callables after a delay on a small thread pool."""

    def __init__(self, threads):
        self._pool = futures.ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="heat-lite-poll"
        )
        self._heap = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-timer"
        )
        self._thread.start()

    def later(self, delay, fn):
        with self._cond:
            heapq.heappush(
                self._heap, (time.monotonic() + delay, next(self._seq), fn)
            )
            self._cond.notify()

    def submit(self, fn):
        self._pool.submit(fn)

    def _loop(self):
        while True:
            with self._cond:
                while not self._stopped and (
                    not self._heap or self._heap[0][0] > time.monotonic()
                ):
                    timeout = (
                        self._heap[0][0] - time.monotonic()
                        if self._heap
                        else None
                    )
                    self._cond.wait(timeout)
                if self._stopped:
                    return
                _, _, fn = heapq.heappop(self._heap)
            self._pool.submit(fn)

    def stop(self):
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._pool.shutdown(wait=False, cancel_futures=True)


class Dispatcher:
    """Runs nodes with ``runner`` and casts with ``worker_api``."""

    def __init__(self, worker_api, scheduler):
        self.worker_api: rpcapi.WorkerAPI = worker_api
        self.scheduler: Scheduler = scheduler
        # Set by the process once the runner, which schedules through
        # this object, is made.
        self.runner: runner_mod.NodeRunner | None = None
        self.casts = 0
        # Set when the engine stops: every node is cast to the other
        # engines instead of run here.
        self.draining = False

    def cast(self, nodes):
        """Send nodes [(stack_id, traversal, entity, phase)] to workers."""
        groups = collections.defaultdict(list)
        for stack_id, traversal, entity, phase in nodes:
            groups[(stack_id, traversal)].append([entity, phase])
        ctxt = context.get_admin_context()
        size = CONF.engine.batch_size
        for (stack_id, traversal), items in groups.items():
            for i in range(0, len(items), size):
                self.casts += 1
                self.worker_api.check_resources(
                    ctxt, stack_id, traversal, items[i : i + size]
                )

    def drive(self, nodes):
        """Run the first node here (and what it makes ready), cast the rest.

        Nodes read ahead here (``prelock``: cleanup nodes whose records
        the transaction that made them ready read and locked) all run
        here. Several cleanup nodes made ready at once (a cleanup phase's
        first ones) are read and locked ahead in one transaction, up to
        ``batch_size`` of them, and run here too.
        """
        nodes = list(nodes)
        if self.draining:
            self.cast(nodes)
            return
        local = collections.deque()
        while nodes or local:
            if len(nodes) > 1:
                self._take_ahead(nodes[: CONF.engine.batch_size])
            mine = [n for n in nodes if self.runner.holds(n)]
            rest = [n for n in nodes if not self.runner.holds(n)]
            if not mine:
                mine, rest = rest[:1], rest[1:]
            if rest:
                self.cast(rest)
            local.extend(mine)
            nodes = self._run(local.popleft()) if local else []

    def run_batch(self, nodes):
        """Run every node of a received batch here, each with continuation
        (its cleanup nodes read and locked ahead in one transaction)."""
        if len(nodes) > 1 and not self.draining:
            self._take_ahead(nodes)
        for node in nodes:
            self.drive([node])

    def _take_ahead(self, nodes):
        cleanup = [n for n in nodes if n[3] == CLEANUP]
        if len(cleanup) < 2 or not self.runner.fence.lease_valid():
            return
        try:
            self.runner.take_ahead(cleanup)
        except Exception as exc:
            if not db_session.is_unavailable(exc):
                raise
            # Each node reads its record itself (and meets the outage).
            LOG.warning("Database unavailable reading nodes ahead: %s", exc)

    def later(self, delay, fn, node=None):
        """Call ``fn`` after ``delay`` s and drive the nodes it returns.

        :param node: the (stack_id, traversal, entity, phase) ``fn``
            works for: should ``fn`` raise, that node fails visibly.
        """
        self.scheduler.later(delay, lambda: self._drive_result(fn, node))

    def _drive_result(self, fn, node):
        try:
            nodes = fn()
        except Exception as exc:  # noqa: BLE001 - fail it, never drop it
            if db_session.is_unavailable(exc):
                # Not the node's fault: the same step, once more, later.
                self._when_db_answers(node, lambda: self.later(0, fn, node))
                return
            nodes = self._failed(node, exc, "Polling node %s" % (node,))
        self.drive(nodes)

    def _run(self, node):
        if not self.runner.fence.lease_valid():
            # Fenced or out of touch with the database: run it once a
            # heartbeat has told whether this engine may still act.
            self.later(CONF.engine.heartbeat_interval, lambda: [node], node)
            return []
        try:
            return self.runner.run(*node)
        except Exception as exc:  # noqa: BLE001 - fail it, never drop it
            if db_session.is_unavailable(exc):
                # Nodes are idempotent: running this one again is safe,
                # and sooner than the watchdog's stall re-drive.
                self._when_db_answers(node, lambda: self.drive([node]))
                return []
            return self._failed(node, exc, "Checking node %s" % (node,))

    def _when_db_answers(self, node, again):
        """The database is unreachable (a restart, a failover): the node
        is neither failed nor dropped; ``again`` runs in a second."""
        LOG.warning(
            "Database unavailable for node %s; again in %ss",
            node,
            DB_RETRY_SECONDS,
        )
        self.scheduler.later(DB_RETRY_SECONDS, again)

    def _failed(self, node, exc, what):
        """Fail ``node`` because ``exc`` escaped it (one traceback).

        If even that fails (the database is down), the node is left to
        the watchdog, whose re-drives are capped and backed off.
        """
        if node is None:
            LOG.error("%s failed", what, exc_info=exc)
            return []
        try:
            return self.runner.fail_node(*node, exc)
        except Exception:  # noqa: BLE001 - the watchdog re-drives later
            LOG.exception("%s failed, and failing it too", what)
            return []
