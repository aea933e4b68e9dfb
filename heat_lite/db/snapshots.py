"""Queries on stack snapshots (``/stacks/<s>/<id>/snapshots``).

A snapshot row is made IN_PROGRESS with the SNAPSHOT traversal that
fills it; when that traversal ends the row gets COMPLETE and the stack's
data, or FAILED and the reason (``snapshot_finish``). Rows are scoped to
their stack: another stack's snapshot is "not found".
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import SNAPSHOT as S
from heat_lite.db import api, models
from heat_lite.db.session import retry_read, transaction

SNAPSHOT = models.Snapshot.__table__


def _snapshot(row):
    row = api._row(row)
    row["data"] = json.loads(row["data"]) if row["data"] else None
    return row


def snapshot_create(values):
    """Store a new snapshot row (``id, stack_id, tenant, name, traversal,
    status``); return it as ``snapshot_get`` does."""
    row = dict(values, created_at=models.utcnow())
    with transaction() as session:
        session.execute(SNAPSHOT.insert().values(**row))
    return snapshot_get(values["stack_id"], values["id"])


@retry_read
def snapshot_get(stack_id, snapshot_id):
    """The snapshot ``snapshot_id`` of ``stack_id``.

    :raises SnapshotNotFound: if the stack has no such snapshot.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            SNAPSHOT.select().where(
                SNAPSHOT.c.id == snapshot_id, SNAPSHOT.c.stack_id == stack_id
            )
        ).first()
    if row is None:
        raise exception.SnapshotNotFound(snapshot=snapshot_id, stack=stack_id)
    return _snapshot(row)


@retry_read
def snapshot_list(stack_id):
    """The snapshots of ``stack_id``, oldest first."""
    with transaction(writer=False) as session:
        rows = session.execute(
            SNAPSHOT.select()
            .where(SNAPSHOT.c.stack_id == stack_id)
            .order_by(SNAPSHOT.c.created_at, SNAPSHOT.c.id)
        ).fetchall()
    return [_snapshot(r) for r in rows]


def snapshot_finish(stack_id, traversal, status, reason, data=None):
    """End the IN_PROGRESS snapshot that ``traversal`` fills (none: a
    no-op). :returns: True if a row was finished."""
    values = {
        "status": status,
        "status_reason": reason,
        "updated_at": models.utcnow(),
    }
    if data is not None:
        values["data"] = json.dumps(data)
    with transaction() as session:
        result = session.execute(
            SNAPSHOT.update()
            .where(
                SNAPSHOT.c.stack_id == stack_id,
                SNAPSHOT.c.traversal == traversal,
                SNAPSHOT.c.status == S.IN_PROGRESS,
            )
            .values(**values)
        )
        return result.rowcount == 1


def snapshot_of_traversal(stack_id, traversal):
    """The id of the snapshot ``traversal`` filled (None if none)."""
    with transaction(writer=False) as session:
        return session.execute(
            sa.select(SNAPSHOT.c.id).where(
                SNAPSHOT.c.stack_id == stack_id,
                SNAPSHOT.c.traversal == traversal,
            )
        ).scalar()


def snapshot_delete(stack_id, snapshot_id):
    """Remove the row; :returns: False if it was already gone."""
    with transaction() as session:
        result = session.execute(
            sa.delete(SNAPSHOT).where(
                SNAPSHOT.c.id == snapshot_id, SNAPSHOT.c.stack_id == stack_id
            )
        )
        return result.rowcount == 1
