"""Saved plans (``db.plans``) on SQLite, PostgreSQL and MariaDB: the
basis of a stack tree and what moves it, the claim that applies a plan
once (and refuses a stale, expired or applied one, writing nothing),
paging, the project scope, the per-stack bound and the purge."""

import datetime
import uuid

import pytest
import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.db import drift as db_drift
from heat_lite.db import models, purge, session
from heat_lite.db import plans as db_plans
from tests.unit.db import rows

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
NOW = datetime.datetime(2026, 12, 5, 3, 0, 0)


def _child(parent_id):
    """A stack nested in ``parent_id`` with one record: (id, record id)."""
    child_id, record_id = rows.stack()
    with session.transaction() as conn:
        conn.execute(
            STACK.update()
            .where(STACK.c.id == child_id)
            .values(owner_id=parent_id)
        )
    return child_id, record_id


def _touch(record_id):
    """What a lock (or any write of a worker) does to a record."""
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id)
            .values(atomic_key=RESOURCE.c.atomic_key + 1)
        )


def _plan(stack_id, tenant="t", created_at=NOW, ttl=3600):
    return db_plans.plan_create(
        {
            "id": str(uuid.uuid4()),
            "stack_id": stack_id,
            "tenant": tenant,
            "existing": False,
            "request": {"template": {"resources": {}}},
            "changes": {"added": [], "updated": []},
            "basis": db_plans.plan_basis(stack_id),
            "traversal": "trav",
            "created_by": "alice",
            "created_at": created_at,
            "expires_at": created_at + datetime.timedelta(seconds=ttl),
            "applied_at": None,
            "applied_traversal": None,
        },
        keep=100,
    )


def _claim(plan, stack_id, now=NOW):
    with session.transaction() as conn:
        db_plans.plan_claim(
            conn, {"id": plan["id"], "stack_name": "s"}, stack_id, "t2", now
        )


def test_the_basis_moves_with_a_record_a_nested_record_and_drift(database):
    stack_id, record_id = rows.stack()
    child_id, child_record = _child(stack_id)
    first = db_plans.plan_basis(stack_id)
    assert set(first["stacks"]) == {stack_id, child_id}
    assert len(first["records"]) == 2
    assert db_plans.basis_changes(first, db_plans.plan_basis(stack_id)) == []
    _touch(child_record)
    changed = db_plans.basis_changes(first, db_plans.plan_basis(stack_id))
    assert changed == ["resource record %s/r0/1 changed" % child_id]
    second = db_plans.plan_basis(stack_id)
    in_sync = [{"resource_name": "r0", "drift_status": "IN_SYNC"}]
    assert db_drift.drift_start(stack_id, "t", "d1", 60)
    db_drift.drift_finish(stack_id, "d1", "IN_SYNC", in_sync)
    # a detection that finds nothing drifted stales nothing
    assert db_plans.basis_changes(second, db_plans.plan_basis(stack_id)) == []
    drifted = [{"resource_name": "r0", "drift_status": "DELETED"}]
    assert db_drift.drift_start(stack_id, "t", "d2", 60)
    db_drift.drift_finish(stack_id, "d2", "DRIFTED", drifted)
    changed = db_plans.basis_changes(second, db_plans.plan_basis(stack_id))
    assert changed == ["the drift report of stack %s changed" % stack_id]


def test_a_plan_is_claimed_once_and_a_stale_one_is_refused(database):
    stack_id, record_id = rows.stack()
    plan = _plan(stack_id)
    stale = _plan(stack_id)
    _claim(plan, stack_id)
    applied = db_plans.plan_get(plan["id"], stack_id, "t")
    assert applied["status"] == "APPLIED"
    assert applied["applied_traversal"] == "t2"
    with pytest.raises(exception.PlanAlreadyApplied):
        _claim(plan, stack_id)
    _touch(record_id)
    with pytest.raises(exception.StalePlan, match="stale plan.*r0/1"):
        _claim(stale, stack_id)
    # the claim wrote nothing: the plan is still READY (marked apart)
    assert db_plans.plan_get(stale["id"], stack_id, "t")["status"] == "READY"
    assert db_plans.plan_mark_stale(stale["id"], "r0 changed")
    assert not db_plans.plan_mark_stale(stale["id"], "again")
    with pytest.raises(exception.StalePlan, match="r0 changed"):
        _claim(stale, stack_id)


def test_an_expired_plan_is_refused(database):
    stack_id, _ = rows.stack()
    plan = _plan(stack_id, ttl=60)
    with pytest.raises(exception.PlanExpired):
        _claim(plan, stack_id, now=NOW + datetime.timedelta(seconds=60))
    _claim(plan, stack_id, now=NOW + datetime.timedelta(seconds=59))


def test_plans_page_newest_first_within_their_project(database):
    stack_id, _ = rows.stack()
    made = [
        _plan(stack_id, created_at=NOW + datetime.timedelta(seconds=i))
        for i in range(3)
    ]
    page = db_plans.plan_get_all(stack_id, "t", limit=2)
    assert [p["id"] for p in page] == [made[2]["id"], made[1]["id"]]
    assert "basis" not in page[0] and page[0]["status"] == "READY"
    rest = db_plans.plan_get_all(stack_id, "t", marker=page[-1]["id"])
    assert [p["id"] for p in rest] == [made[0]["id"]]
    assert db_plans.plan_get_all(stack_id, "other") == []
    with pytest.raises(exception.PlanNotFound):
        db_plans.plan_get(made[0]["id"], stack_id, "other")
    with pytest.raises(exception.PlanNotFound):
        db_plans.plan_delete(made[0]["id"], stack_id, "other")
    with pytest.raises(exception.Invalid):
        db_plans.plan_get_all(stack_id, "other", marker=made[0]["id"])
    db_plans.plan_delete(made[0]["id"], stack_id, "t")
    with pytest.raises(exception.PlanNotFound):
        db_plans.plan_get(made[0]["id"], stack_id, "t")


def test_a_stack_keeps_its_newest_plans_only(database):
    stack_id, _ = rows.stack()
    for i in range(3):
        _plan(stack_id, created_at=NOW + datetime.timedelta(seconds=i))
    newest = db_plans.plan_create(
        dict(
            db_plans.plan_get_all(stack_id, "t")[0],
            id=str(uuid.uuid4()),
            tenant="t",
            request={},
            changes={},
            basis={},
            created_at=NOW + datetime.timedelta(seconds=9),
        ),
        keep=2,
    )
    kept = db_plans.plan_get_all(stack_id, "t")
    assert len(kept) == 2 and kept[0]["id"] == newest["id"]


def test_purge_removes_a_deleted_stacks_plans(database):
    stack_id, _ = rows.stack()
    plan = _plan(stack_id)
    with session.transaction() as conn:
        conn.execute(
            STACK.update().where(STACK.c.id == stack_id).values(deleted_at=NOW)
        )
    purge.purge_deleted(NOW + datetime.timedelta(seconds=1), tenant="t")
    with session.transaction(writer=False) as conn:
        left = conn.execute(
            sa.select(sa.func.count()).where(
                db_plans.PLAN_TABLE.c.id == plan["id"]
            )
        ).scalar()
    assert left == 0
