"""Reads of ``GET /references`` (``engine.endpoint.references``): how
many stacks use each value of a resource property, counted by the
database.

The property's value is taken out of each record's JSON properties by
the database itself (``->>`` on PostgreSQL, ``JSON_EXTRACT`` on MySQL
and SQLite) and the stacks are counted per value there: one statement
answers for any number of stacks, and only one row per value comes back.
A stack whose last COMPLETE template is not its goal (an update runs or
failed) may hold another value in that template; those stacks, always
few, are left out of the counts and handed back for the engine to look
at one by one (``stacks_off_their_rollback_template``).
"""

import json

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from heat_lite.common.states import Action, Status
from heat_lite.db import models
from heat_lite.db.session import dialect, retry_read, transaction

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__


def _live(tenant):
    clause = STACK.c.deleted_at.is_(None)
    if tenant is not None:
        clause = sa.and_(clause, STACK.c.tenant == tenant)
    return clause


def _off_template():
    return sa.and_(
        STACK.c.prev_raw_template_id.is_not(None),
        STACK.c.prev_raw_template_id != STACK.c.raw_template_id,
    )


def _value(table, prop):
    """The SQL expression of property ``prop`` of ``table``'s records,
    as text (None when absent)."""
    column = table.c.properties_data
    name = dialect()
    if name == "postgresql":
        return sa.cast(column, postgresql.JSON)[prop].astext
    path = "$.%s" % json.dumps(prop)
    if name == "mysql":
        return sa.func.json_unquote(sa.func.json_extract(column, path))
    return sa.func.json_extract(column, path)


def _records(table, type_name, role):
    return sa.and_(
        table.c.type == type_name,
        table.c.role == role,
        sa.not_(
            sa.and_(
                table.c.action == Action.DELETE,
                table.c.status == Status.COMPLETE,
            )
        ),
    )


@retry_read
def value_counts(tenant, type_name, prop):
    """{value: [stacks using it in a current record, stacks holding it
    only in a replaced record]} over the live stacks of ``tenant``
    (None: every project) that are on their last COMPLETE template."""
    value = _value(RESOURCE, prop)
    joined = RESOURCE.join(STACK, STACK.c.id == RESOURCE.c.stack_id)
    scope = sa.and_(_live(tenant), sa.not_(_off_template()))
    current = (
        sa.select(
            value.label("v"), sa.func.count(sa.distinct(RESOURCE.c.stack_id))
        )
        .select_from(joined)
        .where(
            scope, _records(RESOURCE, type_name, "current"), value.is_not(None)
        )
        .group_by(value)
    )
    other = RESOURCE.alias("cur")
    also_current = sa.exists().where(
        other.c.stack_id == RESOURCE.c.stack_id,
        _records(other, type_name, "current"),
        _value(other, prop) == value,
    )
    kept = (
        sa.select(
            value.label("v"), sa.func.count(sa.distinct(RESOURCE.c.stack_id))
        )
        .select_from(joined)
        .where(
            scope,
            _records(RESOURCE, type_name, "replaced"),
            value.is_not(None),
            sa.not_(also_current),
        )
        .group_by(value)
    )
    counts = {}
    with transaction(writer=False) as session:
        for found, n in session.execute(current):
            counts.setdefault(str(found), [0, 0])[0] = n
        for found, n in session.execute(kept):
            counts.setdefault(str(found), [0, 0])[1] = n
    return counts


@retry_read
def stacks_off_their_rollback_template(tenant):
    """The live stacks (of ``tenant``, None: all) whose last COMPLETE
    template is not their goal: an update or its rollback runs, or
    failed. Their rollback template may hold other values."""
    query = STACK.select().where(_live(tenant), _off_template())
    with transaction(writer=False) as session:
        return [dict(r._mapping) for r in session.execute(query)]


@retry_read
def property_records(stack_ids, type_name):
    """[(stack id, role, properties_data)] of the current and replaced
    records of ``type_name`` in the stacks ``stack_ids`` (a few)."""
    if not stack_ids:
        return []
    query = sa.select(
        RESOURCE.c.stack_id, RESOURCE.c.role, RESOURCE.c.properties_data
    ).where(
        RESOURCE.c.stack_id.in_(list(stack_ids)),
        RESOURCE.c.type == type_name,
        RESOURCE.c.role.in_(("current", "replaced")),
        sa.not_(
            sa.and_(
                RESOURCE.c.action == "DELETE",
                RESOURCE.c.status == Status.COMPLETE,
            )
        ),
    )
    with transaction(writer=False) as session:
        return [tuple(r) for r in session.execute(query)]
