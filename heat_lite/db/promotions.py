"""Queries of promotions (``engine.fleet.promotion``): the rows, the
provenance of a target stack, the rollback request, and ownership by an
engine life (``db.ownership``, as rollouts).

A promotion is visible in the project it was made from (``tenant``) and
in its target's project (``target_tenant``), nowhere else.
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import PROMOTION as P
from heat_lite.db import image_holds, models, ownership, paging
from heat_lite.db.session import retry_read, transaction

PROMOTION = models.Promotion.__table__
ACTIVE = P.ACTIVE
FINISHED = P.FINISHED
# A newer promotion in one of these has changed its target since.
CHANGED = P.CHANGED


def _shown():
    """SELECT of a promotion as callers see it: its columns and
    ``overtaken_by``, the newest promotion that changed its target after
    it (the one that keeps it from rolling back), or None."""
    newer = PROMOTION.alias("overtaker")
    overtaker = (
        sa.select(newer.c.id)
        .where(
            newer.c.target_stack_id == PROMOTION.c.target_stack_id,
            newer.c.created_at > PROMOTION.c.created_at,
            _overtaking(newer),
        )
        # One direction for both keys, so that the target's index
        # (target_stack_id, created_at[, id]) is read backwards and the
        # first overtaking row ends the scan (mixed directions sorted
        # every newer row of the target, per promotion read: 33 s for a
        # list of 30,000 on MariaDB).
        .order_by(newer.c.created_at.desc(), newer.c.id.desc())
        .limit(1)
        .correlate(PROMOTION)
        .scalar_subquery()
        .label("overtaken_by")
    )
    return sa.select(PROMOTION, overtaker)


def _decoded(row):
    row = dict(row._mapping)
    for key in ("spec", "previous"):
        if row.get(key) is not None:
            row[key] = json.loads(row[key])
    return row


def _visible(tenant):
    return sa.or_(
        PROMOTION.c.tenant == tenant, PROMOTION.c.target_tenant == tenant
    )


def promotion_create(values):
    """Store a new promotion (``spec`` and ``previous`` as dicts)."""
    now = models.utcnow()
    row = dict(
        values,
        spec=json.dumps(values["spec"]),
        previous=(
            json.dumps(values["previous"])
            if values.get("previous") is not None
            else None
        ),
        rollback_requested=False,
        created_at=now,
        updated_at=now,
    )
    with transaction() as session:
        session.execute(PROMOTION.insert().values(row))


@retry_read
def promotion_get(promotion_id, tenant=None):
    """The promotion, seen from project ``tenant`` when given.

    :raises PromotionNotFound: if there is none (visible there).
    """
    query = _shown().where(PROMOTION.c.id == promotion_id)
    if tenant is not None:
        query = query.where(_visible(tenant))
    with transaction(writer=False) as session:
        row = session.execute(query).first()
    if row is None:
        raise exception.PromotionNotFound(promotion=promotion_id)
    return _decoded(row)


@retry_read
def promotion_get_all(tenant, limit=None, marker=None):
    """The promotions from or into project ``tenant``, newest first, a
    page at a time (``marker``: the id of the last one of the previous
    page; keyset paging, ``db.paging``).

    :raises Invalid: for a marker the project does not see.
    """
    columns = [PROMOTION.c.created_at, PROMOTION.c.id]
    with transaction(writer=False) as session:
        query = paging.page(
            session,
            _shown().where(_visible(tenant)),
            columns,
            "desc",
            limit,
            marker,
            lambda m: sa.select(*columns).where(
                PROMOTION.c.id == m, _visible(tenant)
            ),
        )
        return [_decoded(r) for r in session.execute(query)]


@retry_read
def promotions_of_stack(stack_id):
    """Every promotion that targeted stack ``stack_id``, newest first."""
    with transaction(writer=False) as session:
        rows = session.execute(
            _shown()
            .where(PROMOTION.c.target_stack_id == stack_id)
            .order_by(PROMOTION.c.created_at.desc(), PROMOTION.c.id)
        )
        return [_decoded(r) for r in rows]


@retry_read
def promotion_current(stack_id):
    """The newest COMPLETE promotion of target ``stack_id`` (what the
    stack was last promoted from), or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            PROMOTION.select()
            .where(
                PROMOTION.c.target_stack_id == stack_id,
                PROMOTION.c.status == P.COMPLETE,
            )
            .order_by(PROMOTION.c.created_at.desc())
            .limit(1)
        ).first()
    return _decoded(row) if row is not None else None


@retry_read
def promotion_active_for(stack_id):
    """The id of a running promotion into ``stack_id``, or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(PROMOTION.c.id).where(
                PROMOTION.c.target_stack_id == stack_id,
                PROMOTION.c.status.in_(ACTIVE),
            )
        ).first()
    return row.id if row is not None else None


def _overtaking(newer):
    """A newer promotion ``newer`` (an alias of the table) that changes
    or changed the target: running, COMPLETE, or rolled back (once
    COMPLETE: only a COMPLETE promotion rolls back). A newer one whose
    gate failed changed nothing; one rolled back has still overtaken the
    older ones for good (only the newest promotion of a target may roll
    back), so their holds on images can go at its COMPLETE."""
    return sa.or_(
        newer.c.status.in_(CHANGED), newer.c.rollback_requested.is_(True)
    )


def promotion_request_rollback(promotion_id, tenant, owner):
    """Turn a COMPLETE promotion back to IN_PROGRESS with its rollback
    requested and ``owner`` as its owner, unless a newer promotion has
    changed its target since (one conditional write).

    :returns: True if it was; False otherwise (the caller says why).
    :raises PromotionNotFound: if there is no such promotion.
    """
    newer = PROMOTION.alias("newer")
    changed = sa.exists().where(
        newer.c.target_stack_id == PROMOTION.c.target_stack_id,
        newer.c.created_at > PROMOTION.c.created_at,
        _overtaking(newer),
    )
    query = (
        PROMOTION.update()
        .where(
            PROMOTION.c.id == promotion_id,
            _visible(tenant),
            PROMOTION.c.status == P.COMPLETE,
            PROMOTION.c.rollback_requested.is_(False),
            sa.not_(changed),
        )
        .values(
            status=P.IN_PROGRESS,
            status_reason="Rolling back: the target goes back",
            rollback_requested=True,
            engine_id=owner[0],
            epoch=owner[1],
            finished_at=None,
            updated_at=models.utcnow(),
        )
    )
    with transaction() as session:
        if session.execute(query).rowcount == 1:
            return True
    promotion_get(promotion_id, tenant)  # raises if there is none
    return False


def _older_of_target(target_stack_id, created_at):
    """The ids of promotions into ``target_stack_id`` made before
    ``created_at``: overtaken once a newer one is COMPLETE."""
    return sa.select(PROMOTION.c.id).where(
        PROMOTION.c.target_stack_id == target_stack_id,
        PROMOTION.c.created_at < created_at,
    )


def promotion_settle(promotion_id, owner, values):
    """Write a promotion's final ``values`` (status, reason, finish time)
    if ``owner`` still owns it; when the status is COMPLETE, in the same
    transaction release the image holds of the older promotions of its
    target (``image_holds``: overtaken, they can never roll back again,
    so nothing can bring back the images they kept).

    :returns: True if written, False if ``owner`` lost the promotion.
    """

    def release_older(session):
        row = session.execute(
            sa.select(
                PROMOTION.c.target_stack_id, PROMOTION.c.created_at
            ).where(PROMOTION.c.id == promotion_id)
        ).one()
        image_holds.release_in(
            session,
            "promotion",
            _older_of_target(row.target_stack_id, row.created_at),
        )

    return ownership.update_owned(
        PROMOTION,
        promotion_id,
        owner,
        values,
        also=release_older if values.get("status") == P.COMPLETE else None,
    )


def release_holds_of_targets(session, stack_ids):
    """In the caller's transaction (the hard delete of ``stack_ids``,
    ``db.purge``): the promotions into those stacks can never roll back
    again; their image holds go."""
    image_holds.release_in(
        session,
        "promotion",
        sa.select(PROMOTION.c.id).where(
            PROMOTION.c.target_stack_id.in_(list(stack_ids))
        ),
    )


# Ownership (db.ownership) -------------------------------------------------
def promotions_to_run(engine_id):
    """Running promotions no live engine life owns (or ``engine_id``'s)."""
    return ownership.to_run(PROMOTION, ACTIVE, engine_id)


def promotion_claim(promotion_id, seen, owner):
    """Claim a running promotion whose owner is still ``seen``."""
    return ownership.claim(PROMOTION, ACTIVE, promotion_id, seen, owner)


def promotion_owned(promotion_id, owner):
    """True while ``owner`` (engine_id, epoch) owns the promotion."""
    return ownership.owned(PROMOTION, promotion_id, owner)


def promotion_update_owned(promotion_id, owner, values):
    """Write ``values`` if ``owner`` still owns the promotion."""
    if "previous" in values and values["previous"] is not None:
        values = dict(values, previous=json.dumps(values["previous"]))
    return ownership.update_owned(PROMOTION, promotion_id, owner, values)
