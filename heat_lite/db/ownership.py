"""Fenced ownership of the fleet's long-running rows (rollouts,
promotions): which engine life runs one, as a resource lock does.

``engine_id`` + ``epoch`` on the row name the engine life running it;
every write of the runner is conditional on them, so an engine claimed
as dead cannot move a row another engine has taken over. An active row
whose owner is no live service row (claimed, stopped, restarted under a
newer epoch), or that has none, is claimed by one engine (``claim``).
Each function takes the table (``rollout`` or ``promotion``): both have
``id``, ``status``, ``engine_id``, ``epoch`` and ``updated_at``.
"""

import functools

import sqlalchemy as sa

from heat_lite.db import models
from heat_lite.db.session import retry_read, transaction

SERVICE = models.Service.__table__


def _owner_live(table):
    return sa.exists().where(
        SERVICE.c.engine_id == table.c.engine_id,
        SERVICE.c.epoch == table.c.epoch,
        SERVICE.c.deleted_at.is_(None),
    )


def owned_by(table, owner):
    """The clause "``owner`` (engine_id, epoch) owns the row"."""
    return sa.and_(table.c.engine_id == owner[0], table.c.epoch == owner[1])


@functools.lru_cache(maxsize=16)
def _to_run_query(table, active):
    """The statement of ``to_run``, made once per table: every engine
    worker runs it for each of three tables every heartbeat, idle or
    not, and making it (and its cache key) anew cost more CPU than
    running it."""
    return sa.select(table.c.id, table.c.engine_id, table.c.epoch).where(
        table.c.status.in_(active),
        sa.or_(
            table.c.engine_id.is_(None),
            table.c.engine_id == sa.bindparam("engine_id"),
            sa.not_(_owner_live(table)),
        ),
    )


@retry_read
def to_run(table, active, engine_id):
    """Rows in one of the ``active`` statuses that no live engine life
    owns, or that ``engine_id`` owns in any epoch."""
    with transaction(writer=False) as session:
        rows = session.execute(
            _to_run_query(table, tuple(active)), {"engine_id": engine_id}
        )
        return [dict(r._mapping) for r in rows]


def claim(table, active, row_id, seen, owner):
    """Make ``owner`` (engine_id, epoch) the row's owner if its owner is
    still ``seen`` (as read, possibly (None, None)).

    :returns: True if this caller claimed it.
    """
    query = table.update().where(
        table.c.id == row_id, table.c.status.in_(active)
    )
    for column, value in zip(("engine_id", "epoch"), seen, strict=True):
        query = query.where(
            table.c[column].is_(None)
            if value is None
            else table.c[column] == value
        )
    with transaction() as session:
        done = session.execute(
            query.values(engine_id=owner[0], epoch=owner[1])
        )
        return done.rowcount == 1


@retry_read
def owned(table, row_id, owner):
    """True while ``owner`` (engine_id, epoch) owns the row."""
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(table.c.id).where(
                table.c.id == row_id, owned_by(table, owner)
            )
        ).first()
    return row is not None


def update_owned(table, row_id, owner, values, unless=None, also=None):
    """Write ``values`` on the row if ``owner`` still owns it (and the
    boolean column ``unless`` is not set). ``also(session)``, when given,
    runs in the same transaction after a write that took place: what must
    never be seen (or survive a crash) apart from the write."""
    query = table.update().where(table.c.id == row_id, owned_by(table, owner))
    if unless is not None:
        query = query.where(table.c[unless].is_(False))
    with transaction() as session:
        done = session.execute(
            query.values(updated_at=models.utcnow(), **values)
        )
        if done.rowcount != 1:
            return False
        if also is not None:
            also(session)
        return True
