"""PostgreSQL: a node's finish in one statement.

The record's UPDATE, the events' INSERT and the sync point's decrement
are data-modifying CTEs of one statement (``statements.finish_in_one``):
one round trip where the portable writes take three, and the finished
row comes back to be handed on. A finish that did nothing outside the
database commits without waiting for the WAL flush (``_durable``).
"""

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import direct, statements
from heat_lite.db import events as db_events
from heat_lite.db.dialects import base

CONF = conf.CONF


class PostgreSQL(base.Writes):
    """``base.Writes`` with the finish of one sync point in one
    statement (UPDATE ... RETURNING does the rest)."""

    def finish_is_one_statement(self, finish: base.Finish) -> bool:
        return finish.taker is None and _in_one(finish)

    def finish(self, session, finish: base.Finish):
        if not _in_one(finish):
            return super().finish(session, finish)
        statement = statements.finish_in_one(
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
    (``statements.finish_in_one``): the same guard and the same
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
        prefix = statements.RECORD_PREFIX
        handing.append(
            {
                k[len(prefix) :]: v
                for k, v in row.items()
                if k.startswith(prefix)
            }
        )
    return ([entity] if remaining == 0 else []), remaining is not None
