"""Stacks: their rows, lists and trees, and the conditional write that
every change of a traversal's stack goes through
(``stack_update_if_traversal``).

Every function opens its own transaction (``session.transaction``) and
returns plain dicts, so no ORM object or session leaves ``heat_lite.db``.
"""

import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.db import events as db_events
from heat_lite.db import models, paging, statements, templates
from heat_lite.db.session import as_dict, retry_read, transaction

STACK = models.Stack.__table__


def stack_create(values, template, environment, files):
    """Store a new stack and its template atomically.

    :param values: stack columns (id, name, tenant, action, status, ...).
    :returns: the stored stack as a dict.
    :raises StackExists: if a live stack of the project has the name.
    """
    try:
        with transaction() as session:
            tmpl_id = templates.raw_template_insert(
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
    return as_dict(row)


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
    return as_dict(row)


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
    with transaction(writer=False) as session:
        query = paging.page(
            session,
            query,
            columns + [STACK.c.id],
            sort_dir,
            limit,
            marker,
            lambda m: STACK.select().where(STACK.c.id == m),
        )
        return [as_dict(r) for r in session.execute(query)]


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
            db_events.event_insert(session, event)
        return True


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
                as_dict(r)
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
def stacks_in_progress():
    """Live stacks with an action in progress (for the watchdog)."""
    with transaction(writer=False) as session:
        rows = session.execute(
            STACK.select().where(
                STACK.c.status == "IN_PROGRESS", STACK.c.deleted_at.is_(None)
            )
        )
        return [as_dict(r) for r in rows]
