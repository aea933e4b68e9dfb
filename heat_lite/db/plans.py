"""Saved plans of stack updates (``stack_plan``; doc/specs/saved_plans.md).

A plan keeps an update's inputs, the preview made of them and its
*basis*: what the preview was computed against. The basis of a stack is
read in one transaction: the ``current_traversal`` of every live stack of
its tree (the stack and the stacks nested in it, at any depth), the
version, role, ``atomic_key``, action and status of each of their live
records (history rows left out) and a digest of what each stack's last
drift report found drifted. Any update, rollback, cancel, resource step
or lock changes one of these (a record's ``atomic_key`` moves whenever
it is locked or written); a detection that finds new drift changes the
digest.

``plan_claim`` is the apply's guard: called inside the transaction that
swaps the stack's traversal (``traversals.traversal_begin``), it compares
the stored basis with the one read there and marks the plan APPLIED, so
the staleness check and the start of the update commit (or roll back)
together.
"""

import hashlib
import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import Role
from heat_lite.db import models, paging
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction

PLAN_TABLE = models.StackPlan.__table__
STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
DRIFT = models.StackDrift.__table__
READY, APPLIED, STALE = "READY", "APPLIED", "STALE"
# How many differences a stale plan's reason names at most.
_SHOWN = 3
_JSON_COLUMNS = ("request", "changes", "basis")
# The drift statuses of a report entry that are drift
# (``engine.drift.compare``).
_DRIFTED = ("MODIFIED", "DELETED")


def _decoded(row):
    result = as_dict(row)
    for key in _JSON_COLUMNS:
        if key in result:
            result[key] = json.loads(result[key])
    return result


# The basis ------------------------------------------------------------------
def _tree(session, stack_id):
    """{stack id: current_traversal} of the live stack tree of
    ``stack_id`` (one query per level)."""
    found, parents = {}, [stack_id]
    query = sa.select(STACK.c.id, STACK.c.current_traversal).where(
        STACK.c.deleted_at.is_(None)
    )
    rows = session.execute(query.where(STACK.c.id == stack_id)).all()
    while rows:
        found.update((r.id, r.current_traversal) for r in rows)
        parents = [r.id for r in rows]
        rows = session.execute(
            query.where(STACK.c.owner_id.in_(parents))
        ).all()
    return found


def basis_read(session, stack_id):
    """The basis of ``stack_id``'s tree as it is in ``session`` (see the
    module docstring): {"stacks": {id: traversal}, "records": {"<stack
    id>/<name>/<version>": [role, atomic_key, action, status]}, "drift":
    {stack id: digest of the drift its last report found}}."""
    stacks = _tree(session, stack_id)
    ids = sorted(stacks)
    records = {
        "%s/%s/%s" % (r.stack_id, r.name, r.version): [
            r.role,
            r.atomic_key,
            r.action,
            r.status,
        ]
        for r in session.execute(
            sa.select(
                RESOURCE.c.stack_id,
                RESOURCE.c.name,
                RESOURCE.c.version,
                RESOURCE.c.role,
                RESOURCE.c.atomic_key,
                RESOURCE.c.action,
                RESOURCE.c.status,
            ).where(
                RESOURCE.c.stack_id.in_(ids), RESOURCE.c.role != Role.HISTORY
            )
        )
    }
    drift = {}
    for row in session.execute(
        sa.select(DRIFT.c.stack_id, DRIFT.c.report).where(
            DRIFT.c.stack_id.in_(ids)
        )
    ):
        digest = _drift_digest(row.report)
        if digest is not None:
            drift[row.stack_id] = digest
    return {"stacks": stacks, "records": records, "drift": drift}


def _drift_digest(report):
    """A digest of what a drift report found drifted (MODIFIED or
    DELETED entries, with their properties), None if nothing: a detection
    that finds everything in sync (or cannot check) stales no plan, one
    that finds new drift does."""
    drifted = [
        entry
        for entry in json.loads(report or "[]")
        if entry.get("drift_status") in _DRIFTED
    ]
    if not drifted:
        return None
    text = json.dumps(drifted, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@retry_read
def plan_basis(stack_id):
    """The basis of ``stack_id``'s tree now (one read transaction)."""
    with transaction(writer=False) as session:
        return basis_read(session, stack_id)


def basis_changes(old, new):
    """What differs between two bases, in words (at most a few), [] if
    nothing does."""
    found = []
    for key, what in (
        ("stacks", "the traversal of stack %s changed"),
        ("records", "resource record %s changed"),
        ("drift", "the drift report of stack %s changed"),
    ):
        before, now = old.get(key, {}), new.get(key, {})
        for name in sorted(set(before) | set(now)):
            if before.get(name) != now.get(name):
                found.append(what % name)
    if len(found) > _SHOWN:
        found = found[:_SHOWN] + ["%d more" % (len(found) - _SHOWN)]
    return found


# Rows -----------------------------------------------------------------------
def plan_create(values, keep):
    """Store a new plan (``values``: the columns, ``request``,
    ``changes`` and ``basis`` as documents) and delete the stack's
    oldest plans beyond ``keep``.

    :returns: the stored plan.
    """
    row = dict(values, status=READY)
    for key in _JSON_COLUMNS:
        row[key] = json.dumps(values[key])
    with transaction() as session:
        session.execute(PLAN_TABLE.insert().values(**row))
        doomed = list(
            session.execute(
                sa.select(PLAN_TABLE.c.id)
                .where(PLAN_TABLE.c.stack_id == values["stack_id"])
                .order_by(
                    PLAN_TABLE.c.created_at.desc(), PLAN_TABLE.c.id.desc()
                )
                .offset(keep)
            ).scalars()
        )
        if doomed:
            session.execute(
                PLAN_TABLE.delete().where(PLAN_TABLE.c.id.in_(doomed))
            )
    return dict(values, status=READY, status_reason=None)


def _scoped(plan_id, stack_id, tenant):
    return sa.and_(
        PLAN_TABLE.c.id == plan_id,
        PLAN_TABLE.c.stack_id == stack_id,
        PLAN_TABLE.c.tenant == tenant,
    )


@retry_read
def plan_get(plan_id, stack_id, tenant):
    """The plan (documents decoded) of ``stack_id`` in ``tenant``.

    :raises PlanNotFound: if there is none (another stack's, another
        project's).
    """
    with transaction(writer=False) as session:
        row = session.execute(
            PLAN_TABLE.select().where(_scoped(plan_id, stack_id, tenant))
        ).first()
    if row is None:
        raise exception.PlanNotFound(plan=plan_id)
    return _decoded(row)


@retry_read
def plan_get_all(stack_id, tenant, limit=None, marker=None):
    """The stack's plans, newest first, without their documents but the
    request's ``existing``, a page at a time (``marker``: the id of the
    last plan of the previous page).

    :raises Invalid: for a marker that is not a plan of the stack.
    """
    columns = [PLAN_TABLE.c.created_at, PLAN_TABLE.c.id]
    shown = [
        c
        for c in PLAN_TABLE.c
        if c.name not in _JSON_COLUMNS and c.name != "tenant"
    ]
    mine = sa.and_(
        PLAN_TABLE.c.stack_id == stack_id, PLAN_TABLE.c.tenant == tenant
    )
    with transaction(writer=False) as session:
        query = paging.page(
            session,
            sa.select(*shown).where(mine),
            columns,
            "desc",
            limit,
            marker,
            lambda m: sa.select(*columns).where(mine, PLAN_TABLE.c.id == m),
        )
        return [as_dict(r) for r in session.execute(query)]


@retry_write
def plan_delete(plan_id, stack_id, tenant):
    """Delete the plan.

    :raises PlanNotFound: if there is none.
    """
    with transaction() as session:
        gone = session.execute(
            PLAN_TABLE.delete().where(_scoped(plan_id, stack_id, tenant))
        ).rowcount
    if not gone:
        raise exception.PlanNotFound(plan=plan_id)


@retry_write
def plan_mark_stale(plan_id, reason):
    """READY -> STALE with ``reason`` (nothing if it is not READY).

    :returns: True if marked.
    """
    with transaction() as session:
        return bool(
            session.execute(
                PLAN_TABLE.update()
                .where(
                    PLAN_TABLE.c.id == plan_id, PLAN_TABLE.c.status == READY
                )
                .values(status=STALE, status_reason=reason)
            ).rowcount
        )


def plan_claim(session, claim, stack_id, traversal, now):
    """Inside the transaction that starts ``traversal`` of ``stack_id``:
    check that the plan is READY, unexpired and that its basis is the
    stack's basis now, and mark it APPLIED by ``traversal``.

    Called before the swap of the stack's traversal (whose expected value
    is the plan's), so the basis read is the one the update starts from.

    :param claim: {"id": the plan's id, "stack_name": for messages}.

    :raises PlanNotFound: if it was deleted.
    :raises PlanAlreadyApplied, PlanExpired: (409).
    :raises StalePlan: (409) the basis changed, or the plan was found
        stale before; the reason says what changed.
    """
    plan_id, name = claim["id"], claim["stack_name"]
    row = session.execute(
        PLAN_TABLE.select().where(
            PLAN_TABLE.c.id == plan_id, PLAN_TABLE.c.stack_id == stack_id
        )
    ).first()
    if row is None:
        raise exception.PlanNotFound(plan=plan_id)
    plan = _decoded(row)
    check_usable(plan, name, now)
    changed = basis_changes(plan["basis"], basis_read(session, stack_id))
    if changed:
        raise exception.StalePlan(
            plan=plan_id, stack_name=name, reason="; ".join(changed)
        )
    claimed = session.execute(
        PLAN_TABLE.update()
        .where(PLAN_TABLE.c.id == plan_id, PLAN_TABLE.c.status == READY)
        .values(status=APPLIED, applied_at=now, applied_traversal=traversal)
    ).rowcount
    if not claimed:
        raise exception.PlanAlreadyApplied(plan=plan_id, stack_name=name)


def check_usable(plan, stack_name, now):
    """Raise unless ``plan`` may still be applied at ``now``.

    :raises PlanAlreadyApplied, PlanExpired, StalePlan: (409).
    """
    if plan["status"] == APPLIED:
        raise exception.PlanAlreadyApplied(
            plan=plan["id"], stack_name=stack_name
        )
    if plan["status"] == STALE:
        raise exception.StalePlan(
            plan=plan["id"],
            stack_name=stack_name,
            reason=plan["status_reason"] or "found stale before",
        )
    if plan["expires_at"] <= now:
        raise exception.PlanExpired(
            plan=plan["id"],
            stack_name=stack_name,
            expires_at=plan["expires_at"].isoformat(),
        )
