"""PostgreSQL: a node's finish in one statement.

The record's UPDATE, the events' INSERT and the sync point's decrement
are data-modifying CTEs of one statement (``finish_in_one``):
one round trip where the portable writes take three, and the finished
row comes back to be handed on. A finish that did nothing outside the
database commits without waiting for the WAL flush (``_durable``).
"""

import sqlalchemy as sa

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import direct, models, statements
from heat_lite.db import events as db_events
from heat_lite.db.dialects import base

CONF = conf.CONF
RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
EVENT = models.Event.__table__
EVENT_COLUMNS = statements.EVENT_COLUMNS
# The finished record's columns in ``finish_in_one``'s row.
RECORD_PREFIX = "record_"


class PostgreSQL(base.Writes):
    """``base.Writes`` with the finish of one sync point in one
    statement (UPDATE ... RETURNING does the rest)."""

    def finish_is_one_statement(self, finish: base.Finish) -> bool:
        return finish.taker is None and _in_one(finish)

    def finish(self, session, finish: base.Finish):
        if not _in_one(finish):
            return super().finish(session, finish)
        statement = finish_in_one(
            finish.values,
            finish.locked,
            len(finish.events),
            wait_for_wal=_durable(finish.owner, finish.taker),
        )
        fired, found = _finish_in_one(
            session,
            statement,
            dict(
                finish.params, _traversal=finish.traversal, _phase=finish.phase
            ),
            finish.events,
            finish.entities[0],
            finish.handing,
        )
        self.take_fired(session, finish, fired)
        return fired, found


def _in_one(finish):
    """Whether a finish can be one statement: one sync point to decrement
    and the events as ``events.event_values`` makes them."""
    return finish.single and db_events.events_prebuilt(finish.events)


def _durable(owner, taker):
    """Whether a finish's commit waits for PostgreSQL to flush its WAL.

    Not for a record finished without its lock (``owner`` None) in a
    transaction that takes no lock ahead (no ``taker``): nothing outside
    the database was done for it (a lock is taken before any action with
    effects outside: a side-effect-free resource, nothing to do). What a
    database crash could lose of such commits is only the newest ones:
    every commit that does wait (a lock taken before acting, a stack
    marked complete) flushes all the WAL written before it, so whatever
    acted on a lost finish is lost with it, and the stall re-drive
    (``[engine] stall_timeout``) runs the node again.
    ``[database] asynchronous_instant_commits`` off makes every finish
    wait.
    """
    return (
        owner is not None
        or taker is not None
        or not CONF.database.asynchronous_instant_commits
    )


def _finish_in_one(session, statement, params, events, entity, handing=None):
    """The writes of a finish as one statement
    (``finish_in_one``): the same guard and the same
    (fired entities, all sync points found) as its three statements, in
    one round trip; the finished record is appended to ``handing``."""
    params.update(statements.event_parameters(events), _entity=entity)
    db_events.count_events(events)
    row = direct.execute(session, statement, params).dicts()[0]
    finished, remaining = row["finished"], row["remaining"]
    if finished != 1:
        raise exception.ConcurrentTransaction(
            what="resource %s" % params["_rid"]
        )
    if handing is not None:
        prefix = RECORD_PREFIX
        handing.append(
            {
                k[len(prefix) :]: v
                for k, v in row.items()
                if k.startswith(prefix)
            }
        )
    return ([entity] if remaining == 0 else []), remaining is not None


def finish_in_one(columns, locked, events, wait_for_wal=True):
    """``statements.record_finish`` of ``columns``, the INSERT of
    ``events`` events and the decrement of one sync point, in one
    statement (data-modifying CTEs); the events are inserted and the
    sync point decremented only if the record's guard matched.

    Parameters: ``statements.record_finish``'s,
    ``statements.event_parameters``' and ``_traversal``, ``_phase``,
    ``_entity``. Returns one row: the records
    finished (0 or 1) and the sync point's remaining count (NULL: no
    such sync point, or the record did not match). Without
    ``wait_for_wal`` the statement also sets ``synchronous_commit`` off
    for its transaction (``set_config(..., true)`` is ``SET LOCAL``).
    """
    columns = tuple(sorted(columns))

    def build():
        # A new UPDATE, not ``statements.record_finish``'s: a statement once
        # compiled keeps its (empty) RETURNING columns memoized, and a
        # copy made from it with ``returning()`` would export none.
        finished = (
            statements.finish_update(columns, locked).returning(*RESOURCE.c)
        ).cte("finished")
        decremented = (
            SYNC.update()
            .where(
                *statements.sync_where(True),
                sa.exists(sa.select(finished.c.id)),
            )
            .values(remaining=SYNC.c.remaining - 1)
            .returning(SYNC.c.remaining)
        ).cte("decremented")
        query = sa.select(
            sa.select(sa.func.count())
            .select_from(finished)
            .scalar_subquery()
            .label("finished"),
            sa.select(decremented.c.remaining)
            .scalar_subquery()
            .label("remaining"),
        )
        # The record as the finish left it (NULLs if it did not match),
        # for the nodes this one makes ready (``_finish_in_one``).
        one = sa.select(sa.literal(1).label("one")).subquery("one")
        query = query.add_columns(
            *(
                finished.c[c.name].label(RECORD_PREFIX + c.name)
                for c in RESOURCE.c
            )
        ).select_from(one.outerjoin(finished, sa.true()))
        if not wait_for_wal:
            query = query.add_columns(
                sa.func.set_config(
                    "synchronous_commit", "off", sa.true()
                ).label("asynchronous")
            )
        if events:
            rows = [
                sa.select(
                    *(
                        sa.cast(
                            sa.bindparam(
                                "%s_%d" % (c, i), type_=EVENT.c[c].type
                            ),
                            EVENT.c[c].type,
                        )
                        for c in EVENT_COLUMNS
                    )
                ).select_from(finished)
                for i in range(events)
            ]
            source = rows[0] if events == 1 else sa.union_all(*rows)
            logged = EVENT.insert().from_select(EVENT_COLUMNS, source)
            query = query.add_cte(logged.cte("logged"))
        return query

    return statements.once(
        ("finish-in-one", locked, columns, events, wait_for_wal), build
    )
