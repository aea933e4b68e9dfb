"""The signals a resource keeps, one row each (``resource_signal``).

A WaitConditionHandle keeps what is signalled to it as Heat does in the
handle's metadata: ``{id: {"status", "reason", "data"}}`` in arrival
order, a signal with a known id replacing the earlier one in place. Each
signal is a row keyed by (record, signal id), so storing one writes that
row and its event and never reads or rewrites the signals kept before it
(issue 26: one growing document rewritten at every signal cost the
engine memory, time and database space in proportion to all of them).
A record keeps at most ``limit`` distinct ids (``[DEFAULT]
max_signals_per_handle``). The rows of a record go when it becomes
history and with its stack in ``purge_deleted`` (``db.purge``).
"""

import collections
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common.states import Role
from heat_lite.db import events as db_events
from heat_lite.db import models
from heat_lite.db import purge as db_purge
from heat_lite.db.session import retry_read, retry_write, transaction

SIGNAL = models.ResourceSignal.__table__
RESOURCE = models.Resource.__table__

# What ``signal_keep`` did.
STORED, REPLACED, FULL, BUSY = "stored", "replaced", "full", "busy"
_CHUNK = 500


def signal_keep(record_id, build, limit):
    """Store one signal of a record at rest, with its event.

    :param build: ``build(count) -> (signal id, entry, event)``; ``count``
        is the number of distinct signals the record keeps now (a signal
        without an id is numbered ``count + 1``, as in Heat), ``entry``
        ``{"status", "reason", "data"}`` and ``event`` the SIGNAL event's
        values (``db.api.event_values``).
    :param limit: the most distinct ids the record keeps: a new id beyond
        it is refused, a known id is replaced whatever the count.
    :returns: STORED (a new id) or REPLACED; FULL (nothing written) when
        a new id would pass ``limit``; BUSY when the record is locked or
        gone.
    """
    # Two signals racing for the same new id (or the same default number):
    # the loser's INSERT hits the primary key and it is run again, to
    # replace the winner's signal or take the next number.
    try:
        return _keep(record_id, build, limit)
    except db_exc.DBDuplicateEntry:
        return _keep(record_id, build, limit)


@retry_write
def _keep(record_id, build, limit):
    with transaction() as session:
        head = _head(session, record_id)
        if head is None or head.engine_id is not None:
            return BUSY
        signal_id, entry, event = build(head.kept)
        columns = _columns(entry)
        replaced = session.execute(
            SIGNAL.update()
            .where(
                SIGNAL.c.resource_id == record_id,
                SIGNAL.c.signal_id == signal_id,
            )
            .values(updated_at=event["created_at"], **columns)
        ).rowcount
        if not replaced:
            if head.kept >= limit:
                session.rollback()
                return FULL
            session.execute(
                SIGNAL.insert().values(
                    resource_id=record_id,
                    signal_id=signal_id,
                    stack_id=head.stack_id,
                    position=(head.last or 0) + 1,
                    created_at=event["created_at"],
                    **columns,
                )
            )
        _record_event(session, head.stack_id, event)
        return REPLACED if replaced else STORED


def _head(session, record_id):
    """The record's lock holder and stack, and the number and last
    position of the signals it keeps: one round trip."""
    mine = SIGNAL.c.resource_id == RESOURCE.c.id
    return session.execute(
        sa.select(
            RESOURCE.c.engine_id,
            RESOURCE.c.stack_id,
            sa.select(sa.func.count())
            .select_from(SIGNAL)
            .where(mine)
            .scalar_subquery()
            .label("kept"),
            sa.select(sa.func.max(SIGNAL.c.position))
            .where(mine)
            .scalar_subquery()
            .label("last"),
        ).where(RESOURCE.c.id == record_id)
    ).first()


def _columns(entry):
    return {
        "status": entry["status"],
        "reason": entry.get("reason"),
        "data": json.dumps(entry.get("data")),
    }


def _record_event(session, stack_id, event):
    """The SIGNAL event, and the stack's oldest events beyond
    ``max_events_per_stack``: a stream of signals between two operations
    must not grow the event table without end."""
    db_events.event_insert(session, event)
    count = session.execute(sa.select(db_purge.event_count(stack_id))).scalar()
    db_purge.events_trim(session, stack_id, count)


# Reads ---------------------------------------------------------------------
def _entries(session, where):
    """{record id: {signal id: entry}} of the rows ``where`` selects."""
    kept = collections.defaultdict(collections.OrderedDict)
    rows = session.execute(
        sa.select(
            SIGNAL.c.resource_id,
            SIGNAL.c.signal_id,
            SIGNAL.c.status,
            SIGNAL.c.reason,
            SIGNAL.c.data,
        )
        .where(where)
        .order_by(SIGNAL.c.resource_id, SIGNAL.c.position)
    )
    for row in rows:
        kept[row.resource_id][row.signal_id] = {
            "status": row.status,
            "reason": row.reason,
            "data": json.loads(row.data) if row.data is not None else None,
        }
    return kept


@retry_read
def resource_signals(record_id):
    """{signal id: {"status", "reason", "data"}} a record keeps, in
    arrival order."""
    with transaction(writer=False) as session:
        return _entries(session, SIGNAL.c.resource_id == record_id)[record_id]


@retry_read
def stacks_signals(stack_ids):
    """{record id: {signal id: entry}} of the records of ``stack_ids``
    that keep signals (one query per 500 stacks)."""
    kept = {}
    stack_ids = list(stack_ids)
    with transaction(writer=False) as session:
        for i in range(0, len(stack_ids), _CHUNK):
            chunk = stack_ids[i : i + _CHUNK]
            kept.update(_entries(session, SIGNAL.c.stack_id.in_(chunk)))
    return kept


@retry_read
def resource_data_by_name(stack_id, name):
    """The stored plugin data of a stack's resource, with the signals it
    keeps as ``data["signals"]`` (a handle's data holds that key, empty).

    Backs the plugins' ``services.resource_data``: a wait condition reads its
    handle's signals through it.

    :returns: the data of the newest current record of that name ({} if
        it stored none), or None if there is no such record.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(RESOURCE.c.id, RESOURCE.c.rsrc_data)
            .where(
                RESOURCE.c.stack_id == stack_id,
                RESOURCE.c.name == name,
                RESOURCE.c.role == Role.CURRENT,
            )
            .order_by(RESOURCE.c.version.desc())
            .limit(1)
        ).first()
        if row is None:
            return None
        data = json.loads(row.rsrc_data or "{}")
        if "signals" in data:
            where = SIGNAL.c.resource_id == row.id
            data["signals"] = _entries(session, where)[row.id]
    return data
