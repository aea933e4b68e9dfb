"""The last drift detection of each stack (``stack_drift``, issue 32).

A detection owns the row through its ``detection`` id: ``drift_start``
takes the row with one conditional write (refused while another
detection runs, unless that one started more than ``stale_seconds``
ago: its engine died), and ``drift_finish`` stores the report only
while the row is still that detection's. No lock is held while the
cloud is asked.
"""

import datetime
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common.states import Status
from heat_lite.db import models
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction

DRIFT = models.StackDrift.__table__
STACK = models.Stack.__table__
IN_PROGRESS = "DETECTION_IN_PROGRESS"


@retry_write
def drift_start(stack_id, tenant, detection, stale_seconds):
    """Make ``detection`` the stack's running detection.

    :returns: False if another detection runs (started at or after
        ``stale_seconds`` ago or later), True otherwise.
    """
    now = models.utcnow()
    stale_before = now - datetime.timedelta(seconds=stale_seconds)
    values = {
        "detection": detection,
        "status": IN_PROGRESS,
        "status_reason": None,
        "started_at": now,
    }
    with transaction() as session:
        taken = session.execute(
            DRIFT.update()
            .where(
                DRIFT.c.stack_id == stack_id,
                sa.or_(
                    DRIFT.c.status != IN_PROGRESS,
                    DRIFT.c.started_at < stale_before,
                ),
            )
            .values(**values)
        ).rowcount
        if taken:
            return True
        exists = session.execute(
            sa.select(DRIFT.c.stack_id).where(DRIFT.c.stack_id == stack_id)
        ).first()
    if exists is not None:
        return False
    try:
        with transaction() as session:
            session.execute(
                DRIFT.insert().values(
                    stack_id=stack_id, tenant=tenant, **values
                )
            )
    except db_exc.DBDuplicateEntry:
        return False  # another detection inserted it first
    return True


@retry_write
def drift_finish(stack_id, detection, status, report, reason=None):
    """Store the outcome of ``detection`` if the row is still its own.

    :param report: the list of per-resource results (stored as JSON).
    :returns: True if stored.
    """
    with transaction() as session:
        return bool(
            session.execute(
                DRIFT.update()
                .where(
                    DRIFT.c.stack_id == stack_id,
                    DRIFT.c.detection == detection,
                )
                .values(
                    status=status,
                    status_reason=reason,
                    report=None if report is None else json.dumps(report),
                    detected_at=models.utcnow(),
                )
            ).rowcount
        )


@retry_read
def drift_get(stack_id):
    """The stack's last detection (its ``report`` decoded), or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            DRIFT.select().where(DRIFT.c.stack_id == stack_id)
        ).first()
    if row is None:
        return None
    result = as_dict(row)
    result["report"] = json.loads(result["report"] or "[]")
    return result


@retry_read
def drift_due(tag, before, stale_before):
    """The top-level live stacks tagged ``tag`` whose periodic detection
    is due: never detected, last detected (or failed) before ``before``,
    or whose running detection started before ``stale_before`` (its
    engine died). Stacks with an operation in progress wait. One
    statement.

    :returns: [{id, name, tenant}], the longest undetected first.
    """
    last = sa.func.coalesce(DRIFT.c.detected_at, DRIFT.c.started_at)
    query = (
        sa.select(STACK.c.id, STACK.c.name, STACK.c.tenant)
        .select_from(STACK.outerjoin(DRIFT, DRIFT.c.stack_id == STACK.c.id))
        .where(
            STACK.c.owner_id.is_(None),
            STACK.c.deleted_at.is_(None),
            STACK.c.status != Status.IN_PROGRESS,
            STACK.c.tags.is_not(None),
            STACK.c.tags.contains(json.dumps(tag), autoescape=True),
            sa.or_(
                DRIFT.c.stack_id.is_(None),
                sa.and_(DRIFT.c.status != IN_PROGRESS, last < before),
                sa.and_(
                    DRIFT.c.status == IN_PROGRESS,
                    DRIFT.c.started_at < stale_before,
                ),
            ),
        )
        .order_by(last.is_not(None), last, STACK.c.id)
    )
    with transaction(writer=False) as session:
        return [as_dict(row) for row in session.execute(query)]
