"""Record locks as lease objects: one lock of this process, from the
conditional UPDATE that takes it to the write that ends it.

A worker acts on a record only under its lock (``engine_id``,
``lock_epoch``, ``lock_traversal`` on the row, taken by a CAS on
``atomic_key``). ``LockTable.take`` takes it and returns a ``Lease``; the
lease ends in one of three ways, each a method here:

- the action finishes or fails, and the write that records it (guarded
  by the lease's owner) clears the lock, then the lease is forgotten:
  ``Lease.release`` (a failed node), or the job's own write in
  ``actions.ActionRunner`` followed by ``LockTable.job_unlocked``;
- a write is refused because the lock was taken over (this engine was
  claimed, or the watchdog released an orphan): ``LockTable.lost_lock``
  forgets it and the new holder decides;
- the engine is fenced or stops: ``LockTable.drop_all`` forgets every
  lease and leaves the locks to the takeover.

The table ``{record id: (owner, generation)}`` is what the watchdog asks
(``active_records``) to tell a running action from an orphan, so a lease
is in it from before its lock is taken until after its lock is gone.
"""

import logging
import threading

from heat_lite.common.states import Status
from heat_lite.db import locks as db_locks
from heat_lite.engine.recovery import fencing
from heat_lite.engine.worker import dispatch

LOG = logging.getLogger(__name__)


class Lease:
    """This process's lock of one record.

    :param owner: the (engine_id, epoch) the lock was taken as; every
        write under the lease is guarded by it, never by the engine's
        current epoch.
    :param generation: the engine's fencing generation at the take; work
        of an older generation stops.
    """

    def __init__(self, table, record_id, owner, generation):
        self.table = table
        self.record_id = record_id
        self.owner = owner
        self.generation = generation

    @property
    def key(self):
        return (self.owner, self.generation)

    def held(self):
        """True while this process still counts the lease as its own."""
        return self.table.lock_of(self.record_id) == self.key

    def release(self, values, events=()):
        """End the lease with a write of the record (its lock cleared,
        ``values`` and ``events`` written) guarded by the owner.

        :returns: False if the lock was no longer ours in the database.
            (Should the write raise, the lease is kept: the caller retries
            or fails the node, and the lock is not an orphan meanwhile.)
        """
        released = db_locks.resource_release(
            self.record_id, self.owner, values, list(events)
        )
        self.forget()
        return released

    def forget(self):
        """This process no longer counts the lock as its own (a newer
        lease of the same record stays)."""
        self.table.unlocked(self.record_id, self.key)


class LockTable:
    """The record locks this process holds, for one engine process.

    :param fence: the engine's identity (``recovery.fencing.Fence``):
        the owner a lock is taken as and whether the engine may act.
    :param scheduler: the dispatcher; ``draining`` is set when the
        engine stops, and then nothing new starts.
    """

    def __init__(self, fence, scheduler):
        self.fence: fencing.Fence = fence
        self.scheduler: dispatch.Dispatcher = scheduler
        # {record id: (owner, generation)} of the locks this process holds
        # (or is taking) because an action of it runs.
        self._active = {}
        self._active_lock = threading.Lock()
        # Per thread: the locks the node being run took (``take``,
        # ``hold``) and did not hand to a scheduled step (``hand_off``);
        # see ``NodeRunner.run``.
        self._taken = threading.local()

    def active_records(self):
        """Ids of records whose lock an action of this process holds."""
        with self._active_lock:
            return set(self._active)

    def drop_all(self):
        """Forget every action in flight (the engine was fenced or stops):
        their locks are left to the takeover."""
        with self._active_lock:
            self._active.clear()

    def may_act(self):
        """Whether this engine may start an action now: it is not fenced,
        its lease is fresh and it is not stopping."""
        return self.fence.lease_valid() and not getattr(
            self.scheduler, "draining", False
        )

    def take(self, record, traversal, action, extra=None):
        """Take the record's lock for an action of this process.

        A record another action of this process holds (or is taking) is
        refused without asking the database: two messages for one node
        can run at once here (a re-drive crossing the cast that made the
        node ready), and the loser must not forget the winner's action,
        or the watchdog would take its lock for an orphan. The holder
        re-triggers the record when it lets go, as with any lock.

        :returns: the ``Lease``, or None if the lock was not taken.
        """
        if not self.may_act():
            return None
        owner, generation = self.fence.snapshot()
        lease = Lease(self, record["id"], owner, generation)
        with self._active_lock:
            if record["id"] in self._active:
                return None
            self._active[record["id"]] = lease.key
        try:
            locked = db_locks.resource_lock(
                record["id"],
                record["atomic_key"],
                owner,
                traversal,
                dict(
                    {
                        "action": action,
                        "status": Status.IN_PROGRESS,
                        "status_reason": "state changed",
                    },
                    **(extra or {}),
                ),
            )
        except Exception:
            # Whether or not the lock was taken, no action runs for it: a
            # lock that was taken is an orphan the watchdog releases.
            lease.forget()
            raise
        if not locked:
            lease.forget()
            return None
        self._taken_now(record["id"], lease.key)
        return lease

    def hold(self, record_id, key, track=True):
        """The ``Lease`` of a record this process locked by another write
        than ``take`` (a replacement's new version is inserted locked, a
        cleanup node's record is locked ahead: ``prelock``).

        The record is counted as this process's only from here on (unless
        ``reserve`` counted it before the write); the watchdog takes a
        lock for an orphan only when it has seen it unchanged by two
        passes, so the moment between the insert and this call is safe.

        :param key: (owner, generation) the lock was written with.
        :param track: the lock belongs to the node being run (False: to
            the node that will run with it, see ``taken_now``).
        """
        with self._active_lock:
            self._active[record_id] = key
        if track:
            self._taken_now(record_id, key)
        return Lease(self, record_id, key[0], key[1])

    def reserve(self, record_id, key):
        """Count the record as this process's before a write that may lock
        it, as ``take`` does; False if an action of this process holds (or
        is taking) it. ``unlocked(record_id, key)`` undoes it."""
        with self._active_lock:
            if record_id in self._active:
                return False
            self._active[record_id] = key
            return True

    def taken_now(self, lease):
        """The node being run goes on with ``lease`` (taken earlier)."""
        self._taken_now(lease.record_id, lease.key)

    # A node unwound by an unavailable database ----------------------------
    def tracking(self):
        """Start recording the locks this thread's node takes; returns
        (the list they go to, the outer list to restore)."""
        outer = getattr(self._taken, "locks", None)
        self._taken.locks = taken = []
        return taken, outer

    def stop_tracking(self, outer):
        self._taken.locks = outer

    def _taken_now(self, record_id, key):
        taken = getattr(self._taken, "locks", None)
        if taken is not None:
            taken.append((record_id, key))

    def hand_off(self, job):
        """The job's next step is scheduled: from now on its lock belongs
        to that step, not to the node being run."""
        taken = getattr(self._taken, "locks", None)
        entry = (job.record["id"], (job.owner, job.generation))
        if taken and entry in taken:
            taken.remove(entry)

    def forget_unwound(self, taken, exc):
        """Forget the locks in ``taken`` [(record id, (owner,
        generation))] that an exception (the database unavailable) unwound
        while this process still claimed them.

        No action runs for such a lock any more, but while this process
        claims it the watchdog neither re-drives the (locked) node nor
        takes the lock for an orphan, and running the node again does
        nothing (the record is locked): the stack would wait forever.
        Forgotten, the lock is an orphan the watchdog releases (guarded by
        ``atomic_key``) and its node is re-driven.
        """
        for record_id, held in taken:
            with self._active_lock:
                if self._active.get(record_id) != held:
                    continue  # released, or a newer lock of this process
                del self._active[record_id]
            LOG.warning(
                "Database unavailable while an action of resource %s held "
                "its lock; leaving the lock to the watchdog: %s",
                record_id,
                exc,
            )

    def lock_of(self, record_id):
        """(owner, generation) of this process's lock of the record, or
        None."""
        with self._active_lock:
            return self._active.get(record_id)

    def lease_of(self, record_id):
        """This process's ``Lease`` of the record, or None."""
        held = self.lock_of(record_id)
        if held is None:
            return None
        return Lease(self, record_id, held[0], held[1])

    def unlocked(self, record_id, held=None):
        """Forget this process's lock of the record: only the lock
        ``held`` = (owner, generation) when given."""
        with self._active_lock:
            if held is None or self._active.get(record_id) == held:
                self._active.pop(record_id, None)

    def bind(self, job):
        """Give a locked job the owner and generation its lease was taken
        as; False if this process no longer holds it."""
        if job.owner is None:
            if job.lease is None or not job.lease.held():
                return False
            job.owner, job.generation = job.lease.key
        return True

    def job_unlocked(self, job):
        """The job's action no longer holds its lock (a newer lock of this
        process on the same record stays active)."""
        self.unlocked(job.record["id"], (job.owner, job.generation))

    def lost_lock(self, job, exc):
        """A write of the job was refused: its lock was taken over (the
        engine was claimed, or the action was orphaned). The new holder
        decides; nothing is failed here.

        :returns: no next nodes.
        """
        self.job_unlocked(job)
        LOG.warning("Lost the lock of resource %s: %s", job.record["id"], exc)
        return []

    def stale(self, job):
        """True (and the job dropped) if the job belongs to an older
        fencing generation: leave its lock to the takeover."""
        if job.generation == self.fence.generation:
            return False
        self.job_unlocked(job)
        return True
