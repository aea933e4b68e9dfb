"""Change marks: what a page that shows a stack (or a project's stacks)
asks every few seconds to learn whether anything moved, in one cheap
statement instead of reading and rendering everything again.

A stack's marks are the columns of its row that an operation writes, and
over its resource records and events the aggregates that move on every
write: each record write bumps its ``atomic_key`` (so the sum moves), a
replacement adds a record (the count and the highest id move), a clean-up
removes one (the count moves); a new event raises the highest event id,
a purge of old events raises the lowest; the promotions into the stack
(the header names the newest COMPLETE one) are counted. Every aggregate
is over an index prefix (the stack's id), and the stack is looked up by
id *and* project, so a mark never says anything of another project's
stacks.
"""

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import PROMOTION as PROMOTION_STATES
from heat_lite.common.states import Status
from heat_lite.db import models
from heat_lite.db.session import retry_read, transaction

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
EVENT = models.Event.__table__
PROMOTION = models.Promotion.__table__

STACK_MARK_COLUMNS = (
    "name",
    "action",
    "status",
    "status_reason",
    "current_traversal",
    "raw_template_id",
    "tags",
    "updated_at",
    "action_started_at",
    "deleted_at",
)


def _of_stack(column, *aggregates):
    return [
        sa.select(agg)
        .where(column == STACK.c.id)
        .correlate(STACK)
        .scalar_subquery()
        .label(name)
        for name, agg in aggregates
    ]


def _build_stack_marks():
    columns = [STACK.c[name] for name in STACK_MARK_COLUMNS]
    columns += _of_stack(
        RESOURCE.c.stack_id,
        ("records", sa.func.count(RESOURCE.c.id)),
        ("record_writes", sa.func.sum(RESOURCE.c.atomic_key)),
        ("last_record", sa.func.max(RESOURCE.c.id)),
    )
    columns += _of_stack(
        EVENT.c.stack_id,
        ("first_event", sa.func.min(EVENT.c.id)),
        ("last_event", sa.func.max(EVENT.c.id)),
    )
    # The header says which promotion the stack came from: the newest
    # COMPLETE one, which may finish (or be rolled back) after the
    # stack's own last write.
    complete = sa.case(
        (PROMOTION.c.status == PROMOTION_STATES.COMPLETE, 1), else_=0
    )
    columns += _of_stack(
        PROMOTION.c.target_stack_id,
        ("promotions", sa.func.count(PROMOTION.c.id)),
        ("promotions_complete", sa.func.sum(complete)),
        ("last_promoted", sa.func.max(PROMOTION.c.finished_at)),
    )
    return sa.select(*columns).where(
        STACK.c.id == sa.bindparam("_id"),
        STACK.c.tenant == sa.bindparam("_tenant"),
    )


_STACK_MARKS = _build_stack_marks()


@retry_read
def stack_marks(stack_id, tenant):
    """What moves when the stack, its records or its events change.

    :returns: {column: value} of ``STACK_MARK_COLUMNS`` plus ``records``,
        ``record_writes``, ``last_record``, ``first_event``, ``last_event``,
        ``promotions``, ``promotions_complete``, ``last_promoted``.
    :raises StackNotFound: no such stack in project ``tenant``.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            _STACK_MARKS, {"_id": stack_id, "_tenant": tenant}
        ).first()
    if row is None:
        raise exception.StackNotFound(name=stack_id)
    return dict(row._mapping)


def _build_project_marks():
    in_progress = sa.case((STACK.c.status == Status.IN_PROGRESS, 1), else_=0)
    failed = sa.case((STACK.c.status == Status.FAILED, 1), else_=0)
    return sa.select(
        sa.func.count(STACK.c.id).label("stacks"),
        sa.func.count(STACK.c.deleted_at).label("deleted"),
        sa.func.max(STACK.c.created_at).label("last_created"),
        sa.func.max(STACK.c.updated_at).label("last_updated"),
        sa.func.max(STACK.c.action_started_at).label("last_started"),
        sa.func.max(STACK.c.deleted_at).label("last_deleted"),
        sa.func.sum(in_progress).label("in_progress"),
        sa.func.sum(failed).label("failed"),
    ).where(STACK.c.tenant == sa.bindparam("_tenant"))


_PROJECT_MARKS = _build_project_marks()


@retry_read
def project_marks(tenant):
    """What moves when a stack of project ``tenant`` is created, starts
    or ends an operation, or is deleted (nested stacks included).

    :returns: {name: value} of the project's stack aggregates.
    """
    with transaction(writer=False) as session:
        row = session.execute(_PROJECT_MARKS, {"_tenant": tenant}).first()
    return dict(row._mapping)
