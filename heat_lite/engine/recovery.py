"""Keep every stack moving: heartbeats, dead engines, stalls, timeouts.

Each engine process runs ``Watchdog.tick`` every ``heartbeat_interval``:

* it refreshes its own row in ``service``;
* it claims engines whose heartbeat is older than
  ``engine_life_check_timeout`` (one claimer per dead engine; only once its
  own heartbeats have been regular that long, so a database outage does
  not make every engine look dead to the others), takes their
  record locks, marks those records FAILED ("Engine went down during
  resource <ACTION>") and re-drives them in their stack's newest traversal,
  where a failed record is replaced;
* it re-drives the ready nodes of traversals that made no progress for
  ``stall_timeout`` (a lost RPC message, or an engine that died between a
  commit and a cast), and finishes stacks whose join already fired;
* it fails stacks whose action outlived its timeout.

Everything it re-drives is idempotent, so doing it twice is harmless.
"""

import datetime
import logging
import threading
import time

from heat_lite import conf
from heat_lite.db import api as db_api
from heat_lite.db import convergence as conv
from heat_lite.db import models
from heat_lite.engine.planner import BARRIER, STACK

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class Watchdog:
    """Periodic recovery for one engine process."""

    def __init__(self, engine_id, stack_ops, dispatcher):
        self.engine_id = engine_id
        self.ops = stack_ops
        self.dispatcher = dispatcher
        self._stop = threading.Event()
        self._thread = None
        self._suspects = {}
        # Monotonic times of our last heartbeat and of the start of the
        # current run of regular heartbeats (see _may_judge_peers).
        self._last_beat = None
        self._beating_since = None

    def start(self):
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name="heat-lite-watchdog")
        self._thread.start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        db_down = False
        while not self._stop.wait(CONF.engine.heartbeat_interval):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_api.is_unavailable(exc):
                    LOG.exception("Watchdog pass failed")
                elif not db_down:
                    # Once per outage, not a traceback every tick.
                    LOG.warning("Database unavailable; the watchdog waits "
                                "for it: %s", exc)
                db_down = db_down or db_api.is_unavailable(exc)
                continue
            if db_down:
                LOG.info("Database available again")
                db_down = False

    def tick(self):
        """One pass; returns the nodes it re-drove (for tests)."""
        db_api.service_heartbeat(self.engine_id)
        now = models.utcnow()
        dead_before = now - datetime.timedelta(
            seconds=CONF.engine.engine_life_check_timeout)
        redriven = self._release_orphans()
        if self._may_judge_peers():
            for engine_id in db_api.service_claim_dead(dead_before):
                redriven += self.recover_engine(engine_id)
        for stack in conv.stacks_in_progress():
            redriven += self._check_stack(stack, now)
        if redriven:
            self.dispatcher.cast(redriven)
        return redriven

    def _may_judge_peers(self):
        """True once this engine has itself heartbeaten regularly for a
        whole ``engine_life_check_timeout``.

        While the database is unreachable (a restart, a failover) no
        engine can heartbeat; when it is back, every peer's heartbeat is
        old. Declaring them dead then would steal locks of actions that
        are alive and run them twice. So after a gap in our own
        heartbeats (or at start) peers get a full timeout to show up.
        """
        beat = time.monotonic()
        timeout = CONF.engine.engine_life_check_timeout
        if self._last_beat is None or beat - self._last_beat > timeout / 2:
            self._beating_since = beat
        self._last_beat = beat
        return beat - self._beating_since >= timeout

    def recover_engine(self, engine_id):
        """Take over the locks of a dead engine; return nodes to re-drive.
        """
        LOG.warning("Engine %s is dead; taking over its work", engine_id)
        return self._take_over(engine_id, conv.resources_locked_by(engine_id),
                               "Engine went down during resource %s")

    def _release_orphans(self):
        """Locks this process holds in the database but no action of it
        runs for (an unexpected error lost it): fail and re-drive them."""
        active = self.dispatcher.runner.active_records()
        seen = {r["id"]: r for r in conv.resources_locked_by(self.engine_id)
                if r["id"] not in active}
        # Only a lock unchanged (same atomic_key) since the previous pass
        # is an orphan: a new action may take a lock between two reads.
        orphans = [r for r in seen.values()
                   if self._suspects.get(r["id"]) == r["atomic_key"]]
        self._suspects = {i: r["atomic_key"] for i, r in seen.items()}
        return self._take_over(self.engine_id, orphans,
                               "Internal error during resource %s")

    def _take_over(self, engine_id, records, reason_format):
        nodes = []
        for record in records:
            action = record["action"]
            reason = reason_format % action
            event = db_api.event_values(
                record["stack_id"], record["name"],
                record["physical_resource_id"], action, "FAILED", reason,
                record["type"])
            if conv.resource_steal(record["id"], engine_id,
                                   record["atomic_key"],
                                   {"status": "FAILED",
                                    "status_reason": reason}, [event]):
                nodes += self.dispatcher.runner.retrigger(record["id"])
        return nodes

    def _check_stack(self, stack, now):
        timeout = (stack["timeout"] * 60 if stack["timeout"]
                   else CONF.engine.stack_action_timeout)
        if (now - stack["action_started_at"]).total_seconds() > timeout:
            LOG.warning("Stack %s timed out", stack["id"])
            self.ops.mark_failed(stack, "Timed out")
            return []
        last = db_api.event_last_time(stack["id"]) or stack[
            "action_started_at"]
        if (now - last).total_seconds() < CONF.engine.stall_timeout:
            return []
        return self._redrive(stack)

    @staticmethod
    def _converged(record_id, traversal):
        """True if the end of a replacement chain converged."""
        record = conv.resource_load(record_id)
        while record is not None and record["replaced_by"]:
            record = conv.resource_load(record["replaced_by"])
        return record is not None and (
            record["converged_traversal"] == traversal)

    def _redrive(self, stack):
        traversal = stack["current_traversal"]
        if not traversal or conv.traversal_get(traversal) is None:
            LOG.warning("Stack %s has no traversal; failing it", stack["id"])
            self.ops.mark_failed(stack, "Engine went down during stack %s" %
                                 stack["action"])
            return []
        nodes = [(stack["id"], traversal, entity, phase)
                 for entity, phase, replaced_by in conv.ready_nodes(traversal)
                 if not replaced_by or not self._converged(replaced_by,
                                                           traversal)]
        joins = [n for n in nodes if n[3] in (BARRIER, STACK)]
        if joins:
            self.dispatcher.drive(joins)
        nodes = [n for n in nodes if n[3] not in (BARRIER, STACK)]
        if nodes:
            LOG.warning("Re-driving %d stalled nodes of stack %s",
                        len(nodes), stack["id"])
        return nodes
