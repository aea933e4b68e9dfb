"""Queries on stacks, templates, events and engine services.

Every function opens its own transaction (``session.transaction``) and
returns plain dicts, so no ORM object or session leaves ``heat_lite.db``.
Guards are conditional writes whose rowcount is checked. The versioned
resource records, sync points and traversals are in ``db.convergence``.
"""

import json
import uuid

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import counters, exception
from heat_lite.db import direct, models, statements
from heat_lite.db import session as db_session
from heat_lite.db.session import retry_read, transaction

STACK = models.Stack.__table__
TEMPLATE = models.RawTemplate.__table__
EVENT = models.Event.__table__
SERVICE = models.Service.__table__
RESOURCE = models.Resource.__table__


def is_unavailable(exc):
    """True if ``exc`` says the database is unreachable or dropped the
    connection (the same call may succeed later), not that it failed."""
    return db_session.is_unavailable(exc)


def _row(row):
    return dict(row._mapping) if row is not None else None


# Templates -----------------------------------------------------------------
def raw_template_insert(session, stack_id, template, environment, files):
    """Insert a template inside a running transaction; return its id."""
    result = session.execute(
        TEMPLATE.insert().values(
            stack_id=stack_id,
            template=json.dumps(template),
            environment=json.dumps(environment),
            files=json.dumps(files),
            created_at=models.utcnow(),
        )
    )
    return result.inserted_primary_key[0]


@retry_read
def raw_template_get(template_id):
    """Return {id, template, environment, files} with JSON decoded.

    :raises NotFound: if there is no such template.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            TEMPLATE.select().where(TEMPLATE.c.id == template_id)
        ).first()
    if row is None:
        raise exception.NotFound(message="Template %s not found" % template_id)
    row = _row(row)
    for key in ("template", "environment", "files"):
        row[key] = json.loads(row[key])
    return row


# Stacks --------------------------------------------------------------------
def stack_create(values, template, environment, files):
    """Store a new stack and its template atomically.

    :param values: stack columns (id, name, tenant, action, status, ...).
    :returns: the stored stack as a dict.
    :raises StackExists: if a live stack of the project has the name.
    """
    try:
        with transaction() as session:
            tmpl_id = raw_template_insert(
                session, values["id"], template, environment, files
            )
            now = models.utcnow()
            row = dict(
                values,
                raw_template_id=tmpl_id,
                created_at=now,
                action_started_at=now,
                live_name=values["name"],
            )
            session.execute(STACK.insert().values(**row))
    except db_exc.DBDuplicateEntry:
        raise exception.StackExists(stack_name=values["name"]) from None
    return stack_get(values["id"])


@retry_read
def stack_get(stack_id, tenant=None, show_deleted=True):
    """Return the stack with ``stack_id``.

    :param tenant: if given, the stack must belong to this project.
    :raises StackNotFound: if there is no such (visible) stack.
    """
    query = statements.stack_select(tenant is not None, not show_deleted)
    with transaction(writer=False) as session:
        row = session.execute(
            query, {"_id": stack_id, "_tenant": tenant}
        ).first()
    if row is None:
        raise exception.StackNotFound(name=stack_id)
    return _row(row)


@retry_read
def stack_state(stack_id):
    """(current_traversal, action, status) of a stack, or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(
                STACK.c.current_traversal, STACK.c.action, STACK.c.status
            ).where(STACK.c.id == stack_id)
        ).first()
    return tuple(row) if row is not None else None


@retry_read
def stack_get_by_name(tenant, name):
    """Return the live stack named ``name`` in project ``tenant``.

    :raises StackNotFound: if there is none.
    """
    query = (
        STACK.select()
        .where(
            STACK.c.tenant == tenant,
            STACK.c.name == name,
            STACK.c.deleted_at.is_(None),
        )
        .order_by(STACK.c.created_at)
    )
    with transaction(writer=False) as session:
        row = session.execute(query).first()
    if row is None:
        raise exception.StackNotFound(name=name)
    return _row(row)


_SORT_KEYS = {
    "stack_name": STACK.c.name,
    "stack_status": STACK.c.status,
    "creation_time": STACK.c.created_at,
    "updated_time": STACK.c.updated_at,
}


@retry_read
def stack_get_all(
    tenant=None,
    limit=None,
    marker=None,
    sort_keys=None,
    sort_dir="desc",
    show_deleted=False,
    show_nested=False,
    filters=None,
    tags=None,
    tags_any=None,
    not_tags=None,
    not_tags_any=None,
    hidden_tags=None,
):
    """Return the stacks of ``tenant`` (every project when None).

    :param marker: id of the last stack of the previous page.
    :param filters: {column: value or [values]} exact-match filters.
    :param tags: stacks having every one of these tags.
    :param tags_any: stacks having at least one of these tags.
    :param not_tags: stacks not having all of these tags.
    :param not_tags_any: stacks having none of these tags.
    :param hidden_tags: stacks with any of these tags are left out.
    :raises Invalid: for a marker that is not a stack.
    """
    query = _stack_query(
        STACK.select(),
        tenant,
        show_deleted,
        show_nested,
        filters,
        tags,
        tags_any,
        not_tags,
        not_tags_any,
        hidden_tags,
    )
    columns = [_SORT_KEYS[k] for k in (sort_keys or []) if k in _SORT_KEYS]
    columns = columns or [STACK.c.created_at]
    direction = sa.desc if sort_dir == "desc" else sa.asc
    order = [direction(c) for c in columns] + [direction(STACK.c.id)]
    with transaction(writer=False) as session:
        if marker:
            ref = session.execute(
                STACK.select().where(STACK.c.id == marker)
            ).first()
            if ref is None:
                raise exception.Invalid(message="Invalid marker: %s" % marker)
            query = query.where(_after(ref, columns + [STACK.c.id], sort_dir))
        query = query.order_by(*order)
        if limit is not None:
            query = query.limit(limit)
        return [_row(r) for r in session.execute(query)]


@retry_read
def stack_count_all(
    tenant=None,
    show_deleted=False,
    show_nested=False,
    filters=None,
    tags=None,
    tags_any=None,
    not_tags=None,
    not_tags_any=None,
    hidden_tags=None,
):
    """Number of stacks ``stack_get_all`` would return without paging."""
    query = _stack_query(
        sa.select(sa.func.count()).select_from(STACK),
        tenant,
        show_deleted,
        show_nested,
        filters,
        tags,
        tags_any,
        not_tags,
        not_tags_any,
        hidden_tags,
    )
    with transaction(writer=False) as session:
        return session.execute(query).scalar()


def _has_tag(tag):
    # Tags are stored as a JSON list: a tag is present when its JSON
    # string (quotes included) is.
    return sa.and_(
        STACK.c.tags.is_not(None),
        STACK.c.tags.contains(json.dumps(tag), autoescape=True),
    )


def _stack_query(
    query,
    tenant,
    show_deleted,
    show_nested,
    filters,
    tags,
    tags_any,
    not_tags,
    not_tags_any,
    hidden_tags,
):
    if tenant is not None:
        query = query.where(STACK.c.tenant == tenant)
    if not show_deleted:
        query = query.where(STACK.c.deleted_at.is_(None))
    if not show_nested:
        query = query.where(STACK.c.owner_id.is_(None))
    for column, value in (filters or {}).items():
        values = value if isinstance(value, list) else [value]
        query = query.where(STACK.c[column].in_(values))
    if tags:
        query = query.where(sa.and_(*[_has_tag(t) for t in tags]))
    if tags_any:
        query = query.where(sa.or_(*[_has_tag(t) for t in tags_any]))
    if not_tags:
        query = query.where(sa.not_(sa.and_(*[_has_tag(t) for t in not_tags])))
    for tag in (not_tags_any or []) + (hidden_tags or []):
        query = query.where(sa.not_(_has_tag(tag)))
    return query


def _after(ref, columns, sort_dir):
    """The keyset condition "rows strictly after ``ref`` in sort order"."""
    compare = (
        (lambda c, v: c < v) if sort_dir == "desc" else (lambda c, v: c > v)
    )
    clauses = []
    for i, column in enumerate(columns):
        equal = [columns[j] == getattr(ref, columns[j].name) for j in range(i)]
        clauses.append(
            sa.and_(*equal, compare(column, getattr(ref, column.name)))
        )
    return sa.or_(*clauses)


@retry_read
def stack_count(tenant):
    """Number of live stacks of ``tenant``."""
    query = (
        sa.select(sa.func.count())
        .select_from(STACK)
        .where(STACK.c.tenant == tenant, STACK.c.deleted_at.is_(None))
    )
    with transaction(writer=False) as session:
        return session.execute(query).scalar()


def stack_update_if_traversal(
    session, stack_id, traversal, values, refused_actions=(), running=False
):
    """Update the stack only if ``traversal`` is still its current one,
    it is not (soft-)deleted and its action is not one of
    ``refused_actions``; with ``running``, only if it is IN_PROGRESS too.

    ``running`` is for the writes that fail or cancel a traversal: a
    traversal that completed keeps its id, so a decision made on a row
    read before the finish would otherwise undo it.

    Every guard is part of this one conditional write, so no operation
    can start (or finish) on a stack that a concurrent delete or a
    refused state has taken meanwhile.

    Runs inside the caller's transaction; returns True on success.
    """
    query = STACK.update().where(
        STACK.c.id == stack_id,
        STACK.c.current_traversal == traversal,
        STACK.c.deleted_at.is_(None),
    )
    if refused_actions:
        query = query.where(STACK.c.action.not_in(sorted(refused_actions)))
    if running:
        query = query.where(STACK.c.status == "IN_PROGRESS")
    result = session.execute(query.values(**values))
    return result.rowcount == 1


def stack_set_state(stack_id, traversal, values, event=None):
    """Set stack columns if ``traversal`` is current, with an event.

    :returns: True if the stack was updated, False if superseded.
    """
    with transaction() as session:
        if not stack_update_if_traversal(session, stack_id, traversal, values):
            return False
        if event:
            event_insert(session, event)
        return True


# Events --------------------------------------------------------------------
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
                _after(ref, columns, "asc" if ascending else "desc")
            )
        direction = sa.asc if ascending else sa.desc
        query = query.order_by(*[direction(c) for c in columns])
        if limit is not None:
            query = query.limit(limit)
        return [_row(r) for r in session.execute(query)]


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
    return _row(row)


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


# Resources -----------------------------------------------------------------
def resource_set_if_unlocked(record_id, atomic_key, values, events=()):
    """Write ``values`` to a record nobody holds a lock on, if it is still
    the version seen (``atomic_key``); insert ``events`` with it.

    Used by API-driven changes of a resource at rest (mark unhealthy,
    signals).

    :returns: True if written, False if locked or changed meanwhile.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(
                RESOURCE.c.id == record_id,
                RESOURCE.c.atomic_key == atomic_key,
                RESOURCE.c.engine_id.is_(None),
            )
            .values(
                atomic_key=atomic_key + 1, updated_at=models.utcnow(), **values
            )
        )
        if result.rowcount != 1:
            return False
        event_insert(session, *events)
        return True


# Services ------------------------------------------------------------------
def service_create(values):
    """Register an engine process; returns its row."""
    now = models.utcnow()
    with transaction() as session:
        session.execute(
            SERVICE.insert().values(created_at=now, updated_at=now, **values)
        )
        return _row(
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
        row = _row(
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
        return _row(
            session.execute(
                SERVICE.select().where(SERVICE.c.engine_id == engine_id)
            ).first()
        )


def service_heartbeat(engine_id, epoch=None):
    """Refresh the heartbeat of ``engine_id`` (in ``epoch`` when given).

    :returns: False if the row was claimed as dead (or re-registered by
        someone else): the caller is fenced and must stop acting.
    """
    query = SERVICE.update().where(
        SERVICE.c.engine_id == engine_id, SERVICE.c.deleted_at.is_(None)
    )
    if epoch is not None:
        query = query.where(SERVICE.c.epoch == epoch)
    with transaction() as session:
        result = session.execute(query.values(updated_at=models.utcnow()))
        return result.rowcount == 1


def service_get_all(include_deleted=False):
    query = SERVICE.select().order_by(SERVICE.c.id)
    if not include_deleted:
        query = query.where(SERVICE.c.deleted_at.is_(None))
    with transaction(writer=False) as session:
        return [_row(r) for r in session.execute(query)]


def service_claim_dead(older_than, candidates=None):
    """Mark services whose heartbeat is older than ``older_than`` deleted.

    Each dead service is claimed by exactly one caller (conditional
    update). Its locks then belong to no live (engine, epoch), which is
    how the watchdogs find and take them over
    (``convergence.locks_to_recover``).

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


# Resource data for plugins -------------------------------------------------
@retry_read
def resource_data_by_name(stack_id, name):
    """The stored plugin data of a stack's resource (read only).

    Backs ``Resource.lookup_resource_data`` for plugins that watch another
    resource of their stack (a wait condition reads its handle's signals).

    :param stack_id: the stack's id.
    :param name: the resource's logical name.
    :returns: the ``rsrc_data`` dict of the newest current record of that
        name ({} if it stored none), or None if there is no such record.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(RESOURCE.c.rsrc_data)
            .where(
                RESOURCE.c.stack_id == stack_id,
                RESOURCE.c.name == name,
                RESOURCE.c.role == "current",
            )
            .order_by(RESOURCE.c.version.desc())
            .limit(1)
        ).first()
    if row is None:
        return None
    return json.loads(row.rsrc_data or "{}")


# Stack trees ---------------------------------------------------------------
@retry_read
def stack_descendants(stack_ids, max_depth=None):
    """Live stacks nested (at any level, or down to ``max_depth``) under
    ``stack_ids``, one query per level.

    :returns: [(level, stack row)] breadth first; level 1 = children.
    """
    result, level, parents = [], 0, list(stack_ids)
    with transaction(writer=False) as session:
        while parents and (max_depth is None or level < max_depth):
            level += 1
            rows = [
                _row(r)
                for r in session.execute(
                    STACK.select()
                    .where(
                        STACK.c.owner_id.in_(parents),
                        STACK.c.deleted_at.is_(None),
                    )
                    .order_by(STACK.c.created_at, STACK.c.id)
                )
            ]
            result.extend((level, r) for r in rows)
            parents = [r["id"] for r in rows]
    return result


@retry_read
def resources_of_stacks(stack_ids, roles=("current",)):
    """The records with one of ``roles`` of several stacks, one query.

    :returns: {stack_id: [record, ...]} in record id order.
    """
    result = {stack_id: [] for stack_id in stack_ids}
    if not result:
        return result
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(
                RESOURCE.c.stack_id.in_(list(result)),
                RESOURCE.c.role.in_(roles),
            )
            .order_by(RESOURCE.c.id)
        )
        for row in rows:
            result[row.stack_id].append(_row(row))
    return result
