"""Cleanup nodes read, and locked, by a transaction that happens anyway.

A cleanup node that deletes a real resource reads its record and commits
its lock before the delete (a rollback reviving the record, or a
duplicate message, then waits for it). Here that read and that lock are
taken for the cleanup nodes this worker runs next, in the transaction
that makes them ready -- the finish of the node they waited for -- or,
for a batch of nodes handed to this worker (a traversal's first cleanup
nodes, a cast batch), in one transaction for the whole batch. The lock is
still committed before anything is deleted; the node then runs with its
record and lease already in hand (``CleanupPhase.run``), here and only
here, so its lease is handed to the dispatcher like a scheduled step's.

Records whose cleanup takes no lock (deleted, never made, side-effect
free, waiting at a hook, SUSPEND) are read the same way but not locked:
their node runs as before, guarded by the ``atomic_key`` just read.
"""

import threading

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import locks as db_locks
from heat_lite.engine import definitions
from heat_lite.engine.template import registry as type_registry
from heat_lite.engine.traversal.planner import CLEANUP

CONF = conf.CONF
# What the lock of a cleanup node writes (as ``LockTable.take`` does).
LOCK_VALUES = {
    "action": Action.DELETE,
    "status": Status.IN_PROGRESS,
    "status_reason": "state changed",
}


def wants_lock(record, traversal):
    """Whether the cleanup node of ``record`` in ``traversal`` deletes it
    under a lock (``CleanupPhase.run``), told from the record alone and
    templates this process has parsed (it runs inside a transaction)."""
    if (
        record["stack_traversal"] != traversal
        or record["converged_traversal"] == traversal
        or record["engine_id"]
        or record["stack_action"] == Action.SUSPEND
        or record["action"] == Action.DELETE
        and record["status"] == Status.COMPLETE
        or record["action"] == Action.INIT
        and not record["physical_resource_id"]
    ):
        return False
    stack_bound = definitions.cached(record["stack_template_id"])
    bound = definitions.cached(record["template_id"])
    if stack_bound is None or bound is None:
        return False
    if type_registry.hooks(stack_bound.environment, record["name"]):
        return False
    try:
        cls = definitions.plugin_class(
            bound.environment, record["name"], record["type"], bound.files
        )
    except exception.HeatLiteException:
        return False
    return not getattr(cls, "side_effect_free", False)


class Taker:
    """What ``db.locks`` and ``db.finish`` ask while they take records:
    the owner, the lock's values, which records to lock, and how many to
    take."""

    values = LOCK_VALUES

    def __init__(self, locks, traversal):
        self.locks = locks
        self.traversal = traversal
        self.owner, self.generation = locks.fence.snapshot()
        self.limit = CONF.engine.batch_size
        self.result = []
        # Records this process counts as its own before the write (as
        # ``LockTable.take`` does), so that no action of it on one of
        # them forgets the lock taken here.
        self.reserved = set()

    @property
    def key(self):
        return (self.owner, self.generation)

    def wants(self, record):
        if not wants_lock(record, self.traversal):
            return False
        if record["id"] not in self.reserved:
            if not self.locks.reserve(record["id"], self.key):
                return False
            self.reserved.add(record["id"])
        return True

    def release_unused(self, locked=()):
        """Forget the reservations that did not become locks."""
        for record_id in self.reserved - set(locked):
            self.locks.unlocked(record_id, self.key)


class Prelocks:
    """Cleanup nodes this process read (and maybe locked) ahead.

    :param locks: the process's ``lease.LockTable``.
    """

    def __init__(self, locks):
        self.locks = locks
        # {(traversal, record id): (record, Lease or None)}
        self._held = {}
        self._lock = threading.Lock()

    def taker(self, node):
        """A ``Taker`` for the successors of ``node``, or None."""
        if node.phase != CLEANUP or not self.locks.may_act():
            return None
        return Taker(self.locks, node.traversal)

    def keep(self, taker):
        """After the transaction of ``taker`` committed: keep what it
        read, with the leases of what it locked."""
        locked = [r["id"] for r, held in taker.result if held]
        taker.release_unused(locked)
        with self._lock:
            for record, held in taker.result:
                lease = (
                    self.locks.hold(record["id"], taker.key, track=False)
                    if held
                    else None
                )
                self._held[(taker.traversal, record["id"])] = (record, lease)

    def abandon(self, taker):
        """The transaction of ``taker`` failed: nothing was taken."""
        if taker is not None:
            taker.release_unused()

    def take(self, nodes):
        """Read and lock, in one transaction, the cleanup nodes among
        ``nodes`` (at most ``batch_size`` of one traversal) that are not
        held already; the others are left as they are."""
        wanted = [n for n in nodes if n.phase == CLEANUP and not self.holds(n)]
        if not wanted:
            return
        taker = self.taker(wanted[0])
        if taker is None:
            return
        ids = [n.entity for n in wanted if n.traversal == taker.traversal]
        try:
            taker.result = db_locks.resources_take(
                ids[: taker.limit], taker.traversal, taker
            )
        except Exception:
            self.abandon(taker)
            raise
        self.keep(taker)

    def holds(self, node):
        """True if ``node``'s record was read ahead by this process."""
        with self._lock:
            return (node.traversal, node.entity) in self._held

    def claim(self, node):
        """The (record, Lease or None) read ahead for ``node``, once."""
        with self._lock:
            held = self._held.pop((node.traversal, node.entity), None)
        if held is not None and held[1] is not None:
            self.locks.taken_now(held[1])
        return held

    def drop_all(self):
        """Forget everything read ahead (the engine was fenced or stops:
        the locks are left to the takeover)."""
        with self._lock:
            self._held.clear()
