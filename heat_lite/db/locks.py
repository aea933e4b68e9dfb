"""Record locks: taken, released, stolen from a dead engine, recovered.

A record is locked with ``UPDATE ... WHERE atomic_key = :seen AND
engine_id IS NULL`` (and only while the locker's service row is live in
the epoch it claims); every later write of the holder is guarded by
``engine_id = :me AND lock_epoch = :epoch`` (``held_by``): an engine that
was claimed as dead (fenced) has its late writes refused. A lock
``owner`` is the pair ``(engine_id, epoch)``. Locks and guards are
conditional writes whose rowcount is checked, never ``SELECT ... FOR
UPDATE``.
"""

import functools

import sqlalchemy as sa

from heat_lite.db import events as db_events
from heat_lite.db import models, statements
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction

RESOURCE = models.Resource.__table__
SERVICE = models.Service.__table__


def held_by(owner):
    """The lock is held by ``owner`` = (engine_id, epoch)."""
    return sa.and_(
        RESOURCE.c.engine_id == owner[0], RESOURCE.c.lock_epoch == owner[1]
    )


@retry_write
def resource_lock(record_id, atomic_key, owner, traversal, values):
    """Take the record's lock (and set ``values``) if nobody holds it and
    ``owner`` (engine_id, epoch) is a live engine life: a claimed engine
    cannot take new locks.

    :returns: True if the lock was taken.
    """
    params = dict(
        values,
        _rid=record_id,
        _key=atomic_key,
        _engine=owner[0],
        _epoch=owner[1],
        _traversal=traversal,
        _now=models.utcnow(),
    )
    with transaction(single=True) as session:
        result = session.execute(statements.record_lock(values), params)
        return result.rowcount == 1


@retry_write
def resources_take(record_ids, traversal, taker):
    """Read records and lock some of them for ``traversal``, in one
    transaction (see ``take``).

    :returns: [(record, locked)].
    """
    with transaction() as session:
        return take(session, record_ids, traversal, taker)


def take(session, record_ids, traversal, taker):
    """Read the records ``record_ids`` (with their stack's columns) and
    lock those ``taker.wants(record)`` accepts for ``taker.owner`` =
    (engine_id, epoch), writing ``taker.values``: one SELECT and one
    UPDATE whatever their number, each lock guarded as ``resource_lock``
    guards one (the atomic_key read, nobody holding it, a live owner).

    :returns: [(record, locked)], a locked record as this write left it.
    """
    records = [
        as_dict(r)
        for r in session.execute(
            statements.records_select(), {"_rids": sorted(set(record_ids))}
        )
    ]
    wanted = {r["id"]: r["atomic_key"] for r in records if taker.wants(r)}
    if not wanted:
        return [(r, False) for r in records]
    engine_id, epoch = taker.owner
    lock = lock_values(traversal, taker.owner, models.utcnow())
    result = session.execute(
        statements.records_lock(taker.values),
        dict(
            taker.values,
            _keys=sorted(wanted.items()),
            _engine=engine_id,
            _epoch=epoch,
            _traversal=traversal,
            _now=lock["updated_at"],
        ),
    )
    locked = set(wanted)
    if result.rowcount != len(wanted):
        # Some were locked by others meanwhile: which are ours?
        locked = {
            r.id
            for r in session.execute(
                statements.records_select(), {"_rids": sorted(wanted)}
            )
            if (r.engine_id, r.lock_epoch, r.lock_traversal, r.atomic_key)
            == (engine_id, epoch, traversal, wanted[r.id] + 1)
        }
    return [
        (
            as_locked(r, lock, taker.values) if r["id"] in locked else r,
            r["id"] in locked,
        )
        for r in records
    ]


def lock_values(traversal, owner, now):
    """The columns a lock for ``owner`` = (engine_id, epoch) writes."""
    return {
        "engine_id": owner[0],
        "lock_epoch": owner[1],
        "lock_traversal": traversal,
        "updated_at": now,
    }


def as_locked(record, lock, values):
    """``record`` as a lock writing ``lock`` and ``values`` left it."""
    return dict(record, atomic_key=record["atomic_key"] + 1, **lock, **values)


def _unlocking(values):
    """The SET of a write that clears the lock, writing ``values``."""
    return dict(
        values,
        engine_id=None,
        lock_epoch=None,
        lock_traversal=None,
        atomic_key=RESOURCE.c.atomic_key + 1,
        updated_at=models.utcnow(),
    )


@retry_write
def resource_release(record_id, owner, values, events=()):
    """Release a lock without finishing the node (failure, abort).

    :returns: False (and writes no event) if ``owner`` held no lock.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id, held_by(owner))
            .values(_unlocking(values))
        )
        if result.rowcount != 1:
            return False
        db_events.event_insert(session, *events)
        return True


@retry_write
def resource_steal(record_id, dead_engine_id, atomic_key, values, events=()):
    """Take a lock away from a dead engine (or an orphaned action) if it is
    still the one seen (same ``atomic_key``); True if this caller did."""
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(
                RESOURCE.c.id == record_id,
                RESOURCE.c.engine_id == dead_engine_id,
                RESOURCE.c.atomic_key == atomic_key,
            )
            .values(_unlocking(values))
        )
        if result.rowcount == 1:
            db_events.event_insert(session, *events)
        return result.rowcount == 1


@retry_read
def resources_locked_by(engine_id):
    """Records whose lock is held by ``engine_id``."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select().where(RESOURCE.c.engine_id == engine_id)
        )
        return [as_dict(r) for r in rows]


#: What the watchdog reads of a locked record, every heartbeat, for each
#: record locked (not the properties, attributes and data: during a
#: 20-server create that was 20 whole rows per pass per engine worker).
RECOVER_COLUMNS = (
    "id",
    "stack_id",
    "name",
    "type",
    "action",
    "physical_resource_id",
    "engine_id",
    "atomic_key",
)


def locks_to_recover(engine_id):
    """Locks to look at in one query: those ``engine_id`` holds (in any
    epoch) and those whose holder is no live engine life -- claimed as
    dead, stopped, or an engine restarted since under a newer epoch.

    :returns: the columns of the records a recovery reads and writes
        (``RECOVER_COLUMNS``), each with ``holder_live`` (False for the
        latter).
    """
    with transaction(writer=False) as session:
        rows = session.execute(_recover_query(), {"engine_id": engine_id})
        return [as_dict(r) for r in rows]


@functools.cache
def _recover_query():
    """The statement of ``locks_to_recover``, made once (every engine
    worker's watchdog runs it every heartbeat)."""
    live = sa.exists().where(
        SERVICE.c.engine_id == RESOURCE.c.engine_id,
        SERVICE.c.epoch == RESOURCE.c.lock_epoch,
        SERVICE.c.deleted_at.is_(None),
    )
    return sa.select(
        *(RESOURCE.c[name] for name in RECOVER_COLUMNS),
        live.label("holder_live"),
    ).where(
        RESOURCE.c.engine_id.is_not(None),
        sa.or_(
            RESOURCE.c.engine_id == sa.bindparam("engine_id"), sa.not_(live)
        ),
    )
