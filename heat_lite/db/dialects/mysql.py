"""MySQL and MariaDB: multiple-table UPDATEs and LAST_INSERT_ID(expr).

Neither has ``UPDATE ... RETURNING``. A sync point's new count comes back
through ``LAST_INSERT_ID(expr)`` in the statement's OK packet instead of
a SELECT; a finish's record and its one sync point are one UPDATE of
both rows (``finish_with_sync_mysql``); a cleanup finish that
is the last input of its one successor also locks that successor in the
same UPDATE (``finish_and_lock_mysql``).
"""

import sqlalchemy as sa

from heat_lite.db import direct, locks, models, statements
from heat_lite.db import events as db_events
from heat_lite.db.dialects import base

RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
# The parameters of the lock ``finish_and_lock_mysql`` takes: its
# columns' values are named with this prefix.
LOCK_PREFIX = "_lock_"


class MySQL(base.Writes):
    """``base.Writes`` with fewer statements a finish."""

    def finish(self, session, finish: base.Finish):
        taker = finish.taker
        if taker is None or taker.limit <= 0 or len(finish.successors) != 1:
            return super().finish(session, finish)
        return self._finish_taking(session, finish)

    def finish_record(self, session, finish: base.Finish):
        """The record and its one sync point in one UPDATE; only when it
        matches nothing are the two statements run to tell a lost guard
        from a gone traversal."""
        if finish.single:
            entity = finish.entities[0]
            both = direct.execute(
                session,
                finish_with_sync_mysql(finish.values, finish.locked),
                dict(
                    finish.params,
                    _traversal=finish.traversal,
                    _phase=finish.phase,
                    _entity=entity,
                ),
            )
            if both.rowcount == 2:
                return ([entity] if both.lastrowid == 0 else []), True
        return super().finish_record(session, finish)

    def _decrement_one(self, session, params, entity):
        # The new count handed back in the OK packet instead of a SELECT.
        result = direct.execute(
            session,
            sync_decrement_last_insert_id(),
            dict(params, _entity=entity),
        )
        if result.rowcount != 1:
            return [], False
        return ([entity] if result.lastrowid == 0 else []), True

    def _finish_taking(self, session, finish: base.Finish):
        """A finish that reads its one successor first and, when the
        finish is that successor's last input and the taker wants it
        locked, locks it in the finish's own UPDATE
        (``finish_and_lock_mysql``): a read, the events and one
        UPDATE, where reading and locking after the finish
        (``take_fired``) takes a SELECT and an UPDATE more. The read is
        the successor's as ``locks.take`` makes it; a successor that is
        not ready yet, that the taker leaves unlocked or that changed
        between the read and the UPDATE gets what the separate statements
        give it."""
        taker, (entity,) = finish.taker, finish.entities
        successor = direct.execute(
            session,
            record_select_counted(),
            {
                "_rid": entity,
                "_traversal": finish.traversal,
                "_phase": finish.phase,
            },
        ).first()
        last = successor is not None and successor.pop("_remaining") == 1
        if not last or not taker.wants(successor):
            fired, found = self.finish_writes(session, finish)
            if fired and last:
                taker.result = [(successor, False)]
            else:
                self.take_fired(session, finish, fired)
            return fired, found
        db_events.event_insert(session, *finish.events)
        lock = locks.lock_values(
            finish.traversal, taker.owner, finish.params["_now"]
        )
        taken = direct.execute(
            session,
            finish_and_lock_mysql(finish.values, finish.locked, taker.values),
            dict(
                finish.params,
                _traversal=finish.traversal,
                _phase=finish.phase,
                _entity=entity,
                _next_key=successor["atomic_key"],
                _lock_engine=lock["engine_id"],
                _lock_epoch=lock["lock_epoch"],
                **{LOCK_PREFIX + k: v for k, v in taker.values.items()},
            ),
        )
        if taken.rowcount == 3:
            taker.result = [
                (locks.as_locked(successor, lock, taker.values), True)
            ]
            return [entity], True
        fired, found = self.finish_record(session, finish)
        self.take_fired(session, finish, fired)
        return fired, found


# The statements ---------------------------------------------------------
def finish_with_sync_mysql(columns, locked):
    """``statements.record_finish`` of ``columns`` and the decrement of
    one sync point in one multiple-table UPDATE (the join matches only
    if the record's guard does), its new count handed back through
    LAST_INSERT_ID(expr). Both rows changed: 2 rows matched. 0: the guard
    failed or the sync point is gone; the caller tells which apart with
    the two statements this replaces.

    Parameters: ``statements.record_finish``'s and ``_traversal``,
    ``_phase``, ``_entity``.
    """
    columns = tuple(sorted(columns))

    def build():
        values = statements.finish_values(columns)
        values[SYNC.c.remaining] = sa.func.last_insert_id(SYNC.c.remaining - 1)
        return (
            RESOURCE.update()
            .where(
                RESOURCE.c.id == sa.bindparam("_rid"),
                statements.guard(locked),
                *statements.sync_where(True),
            )
            .values(values)
        )

    return statements.once(("finish-mysql", locked, columns), build)


def record_select_counted():
    """``statements.record_select`` of ``_rid`` with the count its sync
    point of ``_traversal``/``_phase`` has left, as ``_remaining`` (NULL
    if it has none)."""

    def build():
        remaining = (
            sa.select(SYNC.c.remaining)
            .where(
                SYNC.c.traversal_id == sa.bindparam("_traversal"),
                SYNC.c.phase == sa.bindparam("_phase"),
                SYNC.c.entity_id == sa.bindparam("_rid"),
            )
            .scalar_subquery()
            .label("_remaining")
        )
        return statements.with_stack(
            RESOURCE.c.id == sa.bindparam("_rid")
        ).add_columns(remaining)

    return statements.once("record-counted", build)


def finish_and_lock_mysql(columns, locked, lock_columns):
    """``finish_with_sync_mysql`` when this finish is the
    last input of its one successor (the sync point's count is 1), which
    the same UPDATE locks: record ``_entity`` if it still has atomic_key
    ``_next_key`` and nobody holds it, for engine ``_lock_engine`` in
    epoch ``_lock_epoch`` (if that engine life is live) and traversal
    ``_traversal``, writing ``lock_columns`` (parameters
    ``_lock_<column>``) as ``statements.record_lock`` does. Three rows
    matched, or none: the caller then finishes without the lock
    (``finish_with_sync_mysql``).
    """
    columns = tuple(sorted(columns))
    lock_columns = tuple(sorted(lock_columns))

    def build():
        successor = RESOURCE.alias("successor")
        owner = ("_lock_engine", "_lock_epoch")
        values = statements.finish_values(columns)
        values[SYNC.c.remaining] = sa.func.last_insert_id(SYNC.c.remaining - 1)
        values.update(
            statements.lock_set(
                successor, lock_columns, *owner, prefix=LOCK_PREFIX
            )
        )
        return (
            RESOURCE.update()
            .where(
                RESOURCE.c.id == sa.bindparam("_rid"),
                statements.guard(locked),
                *statements.sync_where(True),
                SYNC.c.remaining == 1,
                successor.c.id == sa.bindparam("_entity"),
                successor.c.atomic_key == sa.bindparam("_next_key"),
                statements.lockable(successor, *owner),
            )
            .values(values)
        )

    return statements.once(
        ("finish-lock-mysql", locked, columns, lock_columns), build
    )


def sync_decrement_last_insert_id():
    """MySQL: decrement one sync point (``_entity``) and hand its new
    value back through LAST_INSERT_ID(expr), read from the OK packet."""
    return statements.once(
        "decrement-mysql",
        lambda: (
            SYNC.update()
            .where(*statements.sync_where(True))
            .values(remaining=sa.func.last_insert_id(SYNC.c.remaining - 1))
        ),
    )
