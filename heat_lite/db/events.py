"""Events: one row per state change of a stack or resource.

Most are written inside the transaction of the change they record
(``event_insert``), on the hot path as one prebuilt multi-row INSERT.
"""

import json
import uuid

import sqlalchemy as sa

from heat_lite.common import counters, exception
from heat_lite.db import direct, models, paging, statements
from heat_lite.db.session import as_dict, retry_read, transaction

EVENT = models.Event.__table__


def event_values(
    stack_id,
    resource_name,
    physical_id,
    action,
    status,
    reason,
    resource_type,
    properties=None,
    when=None,
):
    """Return the column values of an event row."""
    return {
        "uuid": str(uuid.uuid4()),
        "stack_id": stack_id,
        "resource_name": resource_name,
        "physical_resource_id": physical_id or "",
        "resource_action": action,
        "resource_status": status,
        "resource_status_reason": reason,
        "resource_type": resource_type,
        "resource_properties": (
            json.dumps(properties) if properties is not None else None
        ),
        "created_at": when or models.utcnow(),
    }


_EVENT_KEYS = frozenset(statements.EVENT_COLUMNS)


def events_prebuilt(events):
    """Whether ``events`` fit a prebuilt INSERT (``event_values`` made
    them, at most ``MAX_PREBUILT_ROWS``)."""
    return len(events) <= statements.MAX_PREBUILT_ROWS and all(
        e.keys() == _EVENT_KEYS for e in events
    )


def count_events(events):
    """Count ``events`` as stored (the ``events`` counter)."""
    if events:
        counters.incr("events", len(events))


def event_insert(session, *events):
    """Insert events inside a running transaction (one statement)."""
    if not events:
        return
    count_events(events)
    if events_prebuilt(events):
        # As ``event_values`` makes them: one prebuilt multi-row INSERT.
        direct.execute(
            session,
            statements.event_insert(len(events)),
            statements.event_parameters(events),
        )
    else:
        session.execute(EVENT.insert(), list(events))


def event_create(values):
    """Store one event on its own (a transition with no record change)."""
    with transaction() as session:
        event_insert(session, values)


@retry_read
def event_get_all(
    stack_id,
    resource_name=None,
    limit=None,
    marker=None,
    sort_dir="desc",
    filters=None,
    sort_keys=None,
):
    """Return the events of a stack in id order (ties impossible).

    :param stack_id: a stack id, or a list of them (a stack tree).
    :param marker: uuid of the last event already seen (exclusive).
    :param filters: {column: [values]}.
    :param sort_keys: ``event_time`` (the default order) and/or
        ``resource_type``; the id always breaks ties.
    :raises EventNotFound: if ``marker`` is not an event of the stack.
    """
    stack_ids = stack_id if isinstance(stack_id, list) else [stack_id]
    query = EVENT.select().where(EVENT.c.stack_id.in_(stack_ids))
    if resource_name is not None:
        query = query.where(EVENT.c.resource_name == resource_name)
    for column, values in (filters or {}).items():
        query = query.where(EVENT.c[column].in_(values))
    columns = [
        EVENT.c.resource_type
        for k in (sort_keys or [])
        if k == "resource_type"
    ][:1] + [EVENT.c.id]
    ascending = sort_dir == "asc"
    with transaction(writer=False) as session:
        if marker:
            ref = session.execute(
                EVENT.select().where(
                    EVENT.c.uuid == marker, EVENT.c.stack_id.in_(stack_ids)
                )
            ).first()
            if ref is None:
                raise exception.EventNotFound(event_id=marker)
            query = query.where(
                paging.after(ref, columns, "asc" if ascending else "desc")
            )
        direction = sa.asc if ascending else sa.desc
        query = query.order_by(*[direction(c) for c in columns])
        if limit is not None:
            query = query.limit(limit)
        return [as_dict(r) for r in session.execute(query)]


@retry_read
def event_get(stack_id, event_uuid):
    """Return one event.

    :raises EventNotFound: if the stack has no such event.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            EVENT.select().where(
                EVENT.c.stack_id == stack_id, EVENT.c.uuid == event_uuid
            )
        ).first()
    if row is None:
        raise exception.EventNotFound(event_id=event_uuid)
    return as_dict(row)


@retry_read
def event_last_time(stack_id):
    """created_at of the newest event of the stack (progress marker)."""
    with transaction(writer=False) as session:
        return session.execute(
            sa.select(EVENT.c.created_at)
            .where(EVENT.c.stack_id == stack_id)
            .order_by(EVENT.c.id.desc())
            .limit(1)
        ).scalar()
