"""Queries of rollouts (``engine.fleet``): the rollout rows, their
targets, their owner engine and taskflow's rows of their flows.

Ownership is a fenced claim, like a resource lock: ``engine_id`` +
``epoch`` name the engine life running the rollout, and every write of
the runner (``*_owned``) is conditional on them, so an engine claimed as
dead cannot move a rollout another engine has taken over. A rollout whose
owner is no live service row (claimed, stopped, restarted under a newer
epoch) or has none is claimed by one engine (``rollout_claim``).
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import ROLLOUT as R
from heat_lite.common.states import ROLLOUT_TARGET as T
from heat_lite.db import image_holds, models, ownership, paging
from heat_lite.db.session import retry_read, transaction

ROLLOUT = models.Rollout.__table__
TARGET = models.RolloutTarget.__table__
SERVICE = models.Service.__table__
STACK = models.Stack.__table__
ACTIVE = R.ACTIVE
FINISHED = R.FINISHED


def _decoded(row):
    if row is None:
        return None
    row = dict(row._mapping)
    if "spec" in row:
        row["spec"] = json.loads(row["spec"])
    return row


def rollout_create(values, targets):
    """Store a new rollout (``values``, spec as a dict) and its targets
    ({position, stack_id, stack_name, batch}), all PENDING."""
    now = models.utcnow()
    with transaction() as session:
        session.execute(
            ROLLOUT.insert().values(
                dict(
                    values,
                    spec=json.dumps(values["spec"]),
                    cancel_requested=False,
                    rollback_requested=False,
                    created_at=now,
                    updated_at=now,
                )
            )
        )
        if targets:
            session.execute(
                TARGET.insert(),
                [
                    dict(t, rollout_id=values["id"], status=T.PENDING)
                    for t in targets
                ],
            )


@retry_read
def rollout_get(rollout_id, tenant=None):
    """The rollout (spec decoded), in project ``tenant`` when given.

    :raises RolloutNotFound: if there is none (in that project).
    """
    query = ROLLOUT.select().where(ROLLOUT.c.id == rollout_id)
    if tenant is not None:
        query = query.where(ROLLOUT.c.tenant == tenant)
    with transaction(writer=False) as session:
        row = session.execute(query).first()
    if row is None:
        raise exception.RolloutNotFound(rollout=rollout_id)
    return _decoded(row)


@retry_read
def rollout_get_all(tenant, limit=None, marker=None):
    """The project's rollouts, newest first (spec decoded), a page at a
    time (``marker``: the id of the last one of the previous page).

    :raises Invalid: for a marker that is not a rollout of the project.
    """
    columns = [ROLLOUT.c.created_at, ROLLOUT.c.id]
    with transaction(writer=False) as session:
        query = paging.page(
            session,
            ROLLOUT.select().where(ROLLOUT.c.tenant == tenant),
            columns,
            "desc",
            limit,
            marker,
            lambda m: sa.select(*columns).where(
                ROLLOUT.c.id == m, ROLLOUT.c.tenant == tenant
            ),
        )
        return [_decoded(r) for r in session.execute(query)]


@retry_read
def targets_get(rollout_ids):
    """{rollout id: [target, ...] in position order} of the rollouts."""
    result = {i: [] for i in rollout_ids}
    if not rollout_ids:
        return result
    with transaction(writer=False) as session:
        rows = session.execute(
            TARGET.select()
            .where(TARGET.c.rollout_id.in_(list(rollout_ids)))
            .order_by(TARGET.c.rollout_id, TARGET.c.position)
        )
        for row in rows:
            result[row.rollout_id].append(dict(row._mapping))
    return result


def target_get(rollout_id, position):
    """One target row (None if its rollout is gone)."""
    with transaction(writer=False) as session:
        row = session.execute(
            TARGET.select().where(
                TARGET.c.rollout_id == rollout_id,
                TARGET.c.position == position,
            )
        ).first()
    return dict(row._mapping) if row is not None else None


def rollout_request(rollout_id, tenant, statuses, values, unless=None):
    """A user's action: set ``values`` if the rollout is in one of
    ``statuses`` (and the boolean column ``unless`` is not set).

    :returns: True if it was; False if the rollout is in another state.
    :raises RolloutNotFound: if there is no such rollout.
    """
    query = ROLLOUT.update().where(
        ROLLOUT.c.id == rollout_id,
        ROLLOUT.c.tenant == tenant,
        ROLLOUT.c.status.in_(statuses),
    )
    if unless is not None:
        query = query.where(ROLLOUT.c[unless].is_(False))
    with transaction() as session:
        done = session.execute(
            query.values(updated_at=models.utcnow(), **values)
        )
        if done.rowcount == 1:
            return True
    rollout_get(rollout_id, tenant)  # raises if there is none
    return False


def rollout_delete(rollout_id, tenant):
    """Delete a finished rollout, its targets and its flow's rows.

    :returns: False if it is not finished (nothing deleted).
    :raises RolloutNotFound: if there is no such rollout.
    """
    with transaction() as session:
        done = session.execute(
            ROLLOUT.delete().where(
                ROLLOUT.c.id == rollout_id,
                ROLLOUT.c.tenant == tenant,
                ROLLOUT.c.status.in_(FINISHED),
            )
        )
        if done.rowcount == 1:
            session.execute(
                TARGET.delete().where(TARGET.c.rollout_id == rollout_id)
            )
            _delete_flow(session, rollout_id)
            # Gone, it can roll nothing back: its images are free.
            image_holds.release_in(session, "rollout", rollout_id)
            return True
    rollout_get(rollout_id, tenant)
    return False


def _delete_flow(session, book_uuid):
    # Explicitly, child rows first: SQLite enforces no ON DELETE CASCADE
    # without a pragma.
    LOGBOOK, FLOWDETAIL, ATOMDETAIL = models.taskflow_tables()
    flows = sa.select(FLOWDETAIL.c.uuid).where(
        FLOWDETAIL.c.parent_uuid == book_uuid
    )
    session.execute(
        ATOMDETAIL.delete().where(ATOMDETAIL.c.parent_uuid.in_(flows))
    )
    session.execute(
        FLOWDETAIL.delete().where(FLOWDETAIL.c.parent_uuid == book_uuid)
    )
    session.execute(LOGBOOK.delete().where(LOGBOOK.c.uuid == book_uuid))


# Ownership (db.ownership) -------------------------------------------------
def rollouts_to_run(engine_id):
    """Active rollouts (status IN_PROGRESS / PAUSED) that no live engine
    life owns, or that ``engine_id`` owns in any epoch."""
    return ownership.to_run(ROLLOUT, ACTIVE, engine_id)


def rollout_claim(rollout_id, seen, owner):
    """Make ``owner`` (engine_id, epoch) the rollout's owner if its owner
    is still ``seen`` (as read, possibly (None, None)).

    :returns: True if this caller claimed it.
    """
    return ownership.claim(ROLLOUT, ACTIVE, rollout_id, seen, owner)


def rollout_owned(rollout_id, owner):
    """True while ``owner`` (engine_id, epoch) owns the rollout."""
    return ownership.owned(ROLLOUT, rollout_id, owner)


def rollout_update_owned(rollout_id, owner, values, unless=None):
    """Write ``values`` on the rollout if ``owner`` still owns it (and
    the boolean column ``unless`` is not set)."""
    return ownership.update_owned(ROLLOUT, rollout_id, owner, values, unless)


def rollout_settle_rolled_back(rollout_id, owner, values):
    """Write a rolled back rollout's final ``values`` if ``owner`` still
    owns it and, in the same transaction, release its image holds: it
    can bring no image back again. (Written apart, a reader could see the
    rollout finished and its images still held, and a crash between the
    two would hold them until the rollout is deleted.)

    :returns: True if written.
    """
    return ownership.update_owned(
        ROLLOUT,
        rollout_id,
        owner,
        values,
        also=lambda session: image_holds.release_in(
            session, "rollout", rollout_id
        ),
    )


def _owned_by(owner):
    return ownership.owned_by(ROLLOUT, owner)


def target_update_owned(rollout_id, position, owner, values, statuses=None):
    """Write ``values`` on a target if ``owner`` still owns its rollout
    (and the target is in one of ``statuses`` when given).

    :returns: True if it was written.
    """
    owned = sa.exists().where(ROLLOUT.c.id == rollout_id, _owned_by(owner))
    query = TARGET.update().where(
        TARGET.c.rollout_id == rollout_id,
        TARGET.c.position == position,
        owned,
    )
    if statuses is not None:
        query = query.where(TARGET.c.status.in_(statuses))
    with transaction() as session:
        return session.execute(query.values(**values)).rowcount == 1


def targets_skip_pending(rollout_id, owner, reason, positions=None):
    """Every PENDING target of the rollout (of those at ``positions``,
    if given) becomes SKIPPED."""
    owned = sa.exists().where(ROLLOUT.c.id == rollout_id, _owned_by(owner))
    query = TARGET.update().where(
        TARGET.c.rollout_id == rollout_id,
        TARGET.c.status == T.PENDING,
        owned,
    )
    if positions is not None:
        query = query.where(TARGET.c.position.in_(list(positions)))
    with transaction() as session:
        session.execute(
            query.values(
                status=T.SKIPPED,
                status_reason=reason,
                finished_at=models.utcnow(),
            )
        )


@retry_read
def target_counts(rollout_id):
    """{status: number of targets} of a rollout."""
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(TARGET.c.status, sa.func.count())
            .where(TARGET.c.rollout_id == rollout_id)
            .group_by(TARGET.c.status)
        )
        return {status: count for status, count in rows}


@retry_read
def stack_probes(stack_ids):
    """{stack id: (current_traversal, action, status, status_reason)} of
    the live stacks among ``stack_ids`` (a deleted or missing one is left
    out): one look for every target a rollout has in flight."""
    if not stack_ids:
        return {}
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(
                STACK.c.id,
                STACK.c.current_traversal,
                STACK.c.action,
                STACK.c.status,
                STACK.c.status_reason,
            ).where(
                STACK.c.id.in_(list(stack_ids)), STACK.c.deleted_at.is_(None)
            )
        )
        return {row.id: tuple(row)[1:] for row in rows}
