"""Keep every stack moving: dead engines, stale locks, stalls, timeouts.

Each engine process runs ``Watchdog.tick`` every ``heartbeat_interval``
(its heartbeat runs on a thread of its own, see ``engine.recovery.fencing``):

* it claims engines whose heartbeat is older than
  ``engine_life_check_timeout`` (one claimer per dead engine);
* it takes over locks that belong to no live engine life -- a claimed or
  stopped engine, or an earlier epoch of a restarted one -- and the locks
  of its own that no action of it runs for. Such a record is marked
  FAILED ("Engine went down during resource <ACTION>") and re-driven in
  its stack's newest traversal, where the plugin is asked whether an
  interrupted create made anything before it is created again;
* it watches its share of the in-progress stacks: each stack is watched
  by one live engine (rendezvous hashing of the stack id over the live
  engine ids), which fails it when its action timed out and re-drives its
  ready nodes when the traversal made no progress for ``stall_timeout``
  (a lost RPC message) or at once when the set of live engines changed
  (an engine that died may have taken messages with it). Progress is a
  per-stack mark read for all watched stacks in one query: record writes
  bump ``atomic_key``, so a traversal whose records did not change made
  no progress; a node whose lock is held by a live engine (a long polled
  action) is not re-driven, and is never reported as a stall.

It also starts the next queued update of each watched stack that waits
with no operation running (a stack whose update semantics is ``queue``,
whose last traversal ended on an engine that died before starting it).

Shares (``shares``) get the live engine ids after each pass and run
their own periodic work over them the same way (periodic drift
detection, ``engine.drift.periodic``).

Cost per pass and engine: a handful of statements whatever the number of
stacks (services, locks, stacks, progress marks per 500 watched stacks),
plus one ``ready_nodes`` read per watched stack that looks stalled.
Everything it re-drives is idempotent, so doing it twice is harmless.
"""

import datetime
import hashlib
import logging
import threading
import time

from heat_lite import conf
from heat_lite.common.states import Status
from heat_lite.db import events as db_events
from heat_lite.db import locks as db_locks
from heat_lite.db import models
from heat_lite.db import records as db_records
from heat_lite.db import services as db_services
from heat_lite.db import session as db_session
from heat_lite.db import stacks as db_stacks
from heat_lite.db import sync_points as db_sync_points
from heat_lite.db import traversal_log as db_traversal_log
from heat_lite.db import traversals as db_traversals
from heat_lite.engine.recovery import redrive
from heat_lite.engine.traversal.planner import BARRIER, STACK
from heat_lite.engine.worker.actions import INTERNAL, WENT_DOWN

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def watcher(stack_id, engine_ids):
    """The engine (of ``engine_ids``) that watches ``stack_id``."""
    return max(
        engine_ids,
        key=lambda e: hashlib.md5(("%s/%s" % (stack_id, e)).encode()).digest(),
    )


def live_members(services, dead_before):
    """(engine id, epoch) of the engines whose heartbeat is newer than
    ``dead_before``, sorted."""
    return sorted(
        (s["engine_id"], s["epoch"])
        for s in services
        if s["updated_at"] >= dead_before
    )


class Watchdog:
    """Periodic recovery for one engine process."""

    def __init__(self, fence, stack_ops, dispatcher, shares=()):
        self.fence = fence
        # Periodic work shared out over the live engines the way the
        # stacks are (``watcher``): each pass calls ``share.tick(engines)``
        # (``engine.drift.periodic``).
        self.shares = tuple(shares)
        self.ops = stack_ops
        self.dispatcher = dispatcher
        self._stop = threading.Event()
        self._thread = None
        self._suspects = {}
        self.redrives = redrive.RedriveLimiter(dispatcher)
        self._members = None
        # {stack_id: (progress mark, monotonic time it was first seen)}
        self._progress = {}
        self.passes = 0

    @property
    def engine_id(self):
        return self.fence.engine_id

    def start(self):
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-watchdog"
        )
        self._thread.start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        db_down = False
        while not self._stop.wait(CONF.engine.heartbeat_interval):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_session.is_unavailable(exc):
                    LOG.exception("Watchdog pass failed")
                elif not db_down:
                    # Once per outage, not a traceback every tick.
                    LOG.warning(
                        "Database unavailable; the watchdog waits for it: %s",
                        exc,
                    )
                db_down = db_down or db_session.is_unavailable(exc)
                continue
            if db_down:
                LOG.info("Database available again")
                db_down = False

    def tick(self):
        """One pass; returns the nodes it re-drove (for tests)."""
        if not self.fence.lease_valid():
            return []  # fenced, retiring or cut off: act on nothing
        timeout = CONF.engine.engine_life_check_timeout
        dead_before = models.utcnow() - datetime.timedelta(seconds=timeout)
        services = db_services.service_get_all()
        if self.fence.healthy_for(timeout) and db_services.service_claim_dead(
            dead_before, services
        ):
            services = db_services.service_get_all()
        members = live_members(services, dead_before)
        engines = sorted({e for e, _ in members} | {self.engine_id})
        changed = members != self._members
        if changed and self._members is not None:
            LOG.info("Live engines changed: %d now", len(members))
        self._members = members
        self.passes += 1
        redriven = self._recover_locks(engines)
        redriven += self._watch(engines, changed)
        self._start_queued(engines)
        if redriven:
            self.dispatcher.cast(redriven)
        for share in self.shares:
            try:
                share.tick(engines)
            except Exception:  # noqa: BLE001 - recovery goes on
                LOG.exception("Periodic %s failed", type(share).__name__)
        return redriven

    # Locks ---------------------------------------------------------------
    def _recover_locks(self, engines):
        """Take over stale locks (of stacks this engine watches, or of its
        own earlier lives) and its own orphaned ones."""
        active = self.dispatcher.runner.active_records()
        stale, seen = [], {}
        for record in db_locks.locks_to_recover(self.engine_id):
            if not record["holder_live"]:
                if (
                    record["engine_id"] == self.engine_id
                    or watcher(record["stack_id"], engines) == self.engine_id
                ):
                    stale.append(record)
            elif record["id"] not in active:
                seen[record["id"]] = record
        # Only a lock unchanged (same atomic_key) since the previous pass
        # is an orphan: a new action may take a lock between two reads.
        orphans = [
            r
            for r in seen.values()
            if self._suspects.get(r["id"]) == r["atomic_key"]
        ]
        self._suspects = {i: r["atomic_key"] for i, r in seen.items()}
        if stale:
            LOG.info(
                "Taking over %d locks of engines that went down", len(stale)
            )
        if orphans:
            LOG.warning(
                "Releasing %d locks of this engine that no action holds: %s",
                len(orphans),
                sorted(r["id"] for r in orphans),
            )
        return self.take_over(stale, WENT_DOWN) + self.take_over(
            orphans, INTERNAL
        )

    def hand_over(self):
        """Stopping: give up every lock this engine holds so that another
        engine re-drives those records at once; return their nodes."""
        records = [
            r
            for r in db_locks.locks_to_recover(self.engine_id)
            if r["engine_id"] == self.engine_id
        ]
        if records:
            LOG.info("Handing over %d resource actions", len(records))
        return self.take_over(records, WENT_DOWN)

    def take_over(self, records, reason_format):
        """Fail and release the locks of ``records`` (each as read, guarded
        by its atomic_key); return their nodes in the newest traversal."""
        nodes = []
        for record in records:
            action = record["action"]
            reason = reason_format % action
            event = db_events.event_values(
                record["stack_id"],
                record["name"],
                record["physical_resource_id"],
                action,
                Status.FAILED,
                reason,
                record["type"],
            )
            if db_locks.resource_steal(
                record["id"],
                record["engine_id"],
                record["atomic_key"],
                {"status": Status.FAILED, "status_reason": reason},
                [event],
            ):
                nodes += self.dispatcher.runner.retrigger(record["id"])
        return nodes

    # Stacks --------------------------------------------------------------
    def _watch(self, engines, members_changed):
        stacks = [
            s
            for s in db_stacks.stacks_in_progress()
            if watcher(s["id"], engines) == self.engine_id
        ]
        marks = db_traversals.progress_marks([s["id"] for s in stacks])
        progress, self._progress = self._progress, {}
        nodes = []
        for stack in stacks:
            mark = (stack["current_traversal"], marks.get(stack["id"]))
            seen, since = progress.get(stack["id"], (None, None))
            now = time.monotonic()
            if mark != seen:
                since = now
            self._progress[stack["id"]] = (mark, since)
            if self._timed_out(stack):
                continue
            if members_changed or (now - since >= CONF.engine.stall_timeout):
                # Look again only after another stall_timeout.
                self._progress[stack["id"]] = (mark, now)
                nodes += self._redrive(stack, stalled=not members_changed)
        return nodes

    def _start_queued(self, engines):
        """Start the queued updates of the idle stacks this engine
        watches: the engine that finished their last traversal died
        before it started the next (``traversal.queue``)."""
        if self.ops.queue is None:
            return
        for stack_id in db_traversal_log.queued_idle_stacks():
            if watcher(stack_id, engines) == self.engine_id:
                started = self.ops.queue.start_next(stack_id)
                if started:
                    LOG.info(
                        "Started queued update %s of stack %s",
                        started,
                        stack_id,
                    )

    def _timed_out(self, stack):
        timeout = (
            stack["timeout"] * 60
            if stack["timeout"]
            else CONF.engine.stack_action_timeout
        )
        elapsed = models.utcnow() - stack["action_started_at"]
        if elapsed.total_seconds() <= timeout:
            return False
        if self.ops.mark_failed(stack, "Timed out"):
            LOG.warning("Stack %s timed out", stack["id"])
        return True

    @staticmethod
    def _converged(record_id, traversal):
        """True if the end of a replacement chain converged."""
        record = db_records.resource_load(record_id)
        while record is not None and record["replaced_by"]:
            record = db_records.resource_load(record["replaced_by"])
        return record is not None and (
            record["converged_traversal"] == traversal
        )

    def _redrive(self, stack, stalled=True):
        traversal = stack["current_traversal"]
        if not traversal or db_traversals.traversal_get(traversal) is None:
            age = models.utcnow() - stack["action_started_at"]
            if age.total_seconds() < CONF.engine.stall_timeout:
                return []  # its traversal is being stored right now
            # (A stack that completed since it was read keeps its
            # traversal id but not the row: mark_failed leaves it be.)
            if self.ops.mark_failed(
                stack, "Engine went down during stack %s" % stack["action"]
            ):
                LOG.warning("Stack %s had no traversal: failed", stack["id"])
            return []
        nodes = [
            (stack["id"], traversal, entity, phase)
            for entity, phase, replaced_by in db_sync_points.ready_nodes(
                traversal
            )
            if not replaced_by or not self._converged(replaced_by, traversal)
        ]
        joins = [n for n in nodes if n[3] in (BARRIER, STACK)]
        if joins:
            self.dispatcher.drive(joins)
        nodes = [n for n in nodes if n[3] not in (BARRIER, STACK)]
        if stalled:
            # Capped and backed off: see engine/recovery/redrive.py. A re-drive
            # because the live engines changed is not a stall.
            nodes = self.redrives.admit(stack, nodes)
        if nodes:
            log = LOG.warning if stalled else LOG.info
            log(
                "Re-driving %d %s nodes of stack %s",
                len(nodes),
                "stalled" if stalled else "ready",
                stack["id"],
            )
        return nodes
