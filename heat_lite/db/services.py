"""Engine services: one row per engine identity, its epoch (a life of
that engine) and heartbeat. A lock is held by an (engine, epoch); a row
claimed as dead makes every lock of its epoch stale at once."""

import functools

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.db import models
from heat_lite.db.session import as_dict, transaction

SERVICE = models.Service.__table__


def service_create(values):
    """Register an engine process; returns its row."""
    now = models.utcnow()
    with transaction() as session:
        session.execute(
            SERVICE.insert().values(created_at=now, updated_at=now, **values)
        )
        return as_dict(
            session.execute(
                SERVICE.select().where(
                    SERVICE.c.engine_id == values["engine_id"]
                )
            ).first()
        )


def service_register(values, may_take_over):
    """Register engine ``values['engine_id']`` under a new epoch.

    A first registration inserts the row (epoch 1). An existing row --
    an earlier life of the same engine, or this process after it was
    claimed -- is taken over with ``epoch + 1`` (and un-deleted) if it is
    deleted or ``may_take_over(row)`` says so; the new epoch makes every
    lock of an older epoch stale at once. Conditional on the epoch seen,
    so two registrations cannot both win.

    :returns: the row as registered, or None if the identity belongs to
        another live process (``may_take_over`` refused).
    """
    engine_id = values["engine_id"]
    for _ in range(10):
        try:
            outcome = _register_once(values, may_take_over)
        except db_exc.DBDuplicateEntry:
            continue  # another process inserted it first: look again
        if outcome == "refused":
            return None
        if outcome == "done":
            return service_get(engine_id)
    raise exception.ConcurrentTransaction(what="service %s" % engine_id)


def _register_once(values, may_take_over):
    engine_id = values["engine_id"]
    now = models.utcnow()
    with transaction() as session:
        row = as_dict(
            session.execute(
                SERVICE.select().where(SERVICE.c.engine_id == engine_id)
            ).first()
        )
        if row is None:
            session.execute(
                SERVICE.insert().values(
                    created_at=now, updated_at=now, epoch=1, **values
                )
            )
            return "done"
        if row["deleted_at"] is None and not may_take_over(row):
            return "refused"
        result = session.execute(
            SERVICE.update()
            .where(
                SERVICE.c.engine_id == engine_id,
                SERVICE.c.epoch == row["epoch"],
            )
            .values(
                epoch=row["epoch"] + 1,
                updated_at=now,
                deleted_at=None,
                **values,
            )
        )
        return "done" if result.rowcount == 1 else "retry"


def service_get(engine_id):
    """The service row of ``engine_id`` (deleted or not), or None."""
    with transaction(writer=False) as session:
        return as_dict(
            session.execute(
                SERVICE.select().where(SERVICE.c.engine_id == engine_id)
            ).first()
        )


def service_heartbeat(engine_id, epoch=None):
    """Refresh the heartbeat of ``engine_id`` (in ``epoch`` when given).

    :returns: False if the row was claimed as dead (or re-registered by
        someone else): the caller is fenced and must stop acting.
    """
    with transaction() as session:
        result = session.execute(
            _heartbeat_query(epoch is not None),
            {"e_id": engine_id, "e_epoch": epoch, "beat_at": models.utcnow()},
        )
        return result.rowcount == 1


# Every engine worker beats and its watchdog reads the services every
# heartbeat: their statements are made once, not anew each time (making
# one and its cache key cost about as much CPU as running it).
@functools.lru_cache(maxsize=2)
def _heartbeat_query(with_epoch):
    query = SERVICE.update().where(
        SERVICE.c.engine_id == sa.bindparam("e_id"),
        SERVICE.c.deleted_at.is_(None),
    )
    if with_epoch:
        query = query.where(SERVICE.c.epoch == sa.bindparam("e_epoch"))
    return query.values(updated_at=sa.bindparam("beat_at"))


@functools.lru_cache(maxsize=2)
def _all_query(include_deleted):
    query = SERVICE.select().order_by(SERVICE.c.id)
    if not include_deleted:
        query = query.where(SERVICE.c.deleted_at.is_(None))
    return query


def service_get_all(include_deleted=False):
    with transaction(writer=False) as session:
        return [
            as_dict(r) for r in session.execute(_all_query(include_deleted))
        ]


def service_claim_dead(older_than, candidates=None):
    """Mark services whose heartbeat is older than ``older_than`` deleted.

    Each dead service is claimed by exactly one caller (conditional
    update). Its locks then belong to no live (engine, epoch), which is
    how the watchdogs find and take them over
    (``locks.locks_to_recover``).

    :param candidates: the service rows already read (saves a query).
    :returns: the engine ids this caller claimed.
    """
    claimed = []
    if candidates is None:
        candidates = service_get_all()
    for row in candidates:
        if row["deleted_at"] is not None or row["updated_at"] >= older_than:
            continue
        with transaction() as session:
            result = session.execute(
                SERVICE.update()
                .where(
                    SERVICE.c.engine_id == row["engine_id"],
                    SERVICE.c.epoch == row["epoch"],
                    SERVICE.c.deleted_at.is_(None),
                    SERVICE.c.updated_at < older_than,
                )
                .values(deleted_at=models.utcnow())
            )
            if result.rowcount == 1:
                claimed.append(row["engine_id"])
    return claimed


def service_delete(engine_id, epoch=None):
    """Unregister ``engine_id`` (only its life ``epoch`` when given)."""
    query = SERVICE.update().where(
        SERVICE.c.engine_id == engine_id, SERVICE.c.deleted_at.is_(None)
    )
    if epoch is not None:
        query = query.where(SERVICE.c.epoch == epoch)
    with transaction() as session:
        session.execute(query.values(deleted_at=models.utcnow()))


def service_purge_deleted(older_than):
    """Drop service rows deleted before ``older_than``."""
    with transaction() as session:
        session.execute(
            SERVICE.delete().where(
                SERVICE.c.deleted_at.is_not(None),
                SERVICE.c.deleted_at < older_than,
            )
        )
