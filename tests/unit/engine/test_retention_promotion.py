"""A promotion holds the images its rollback would bring back
(``engine.fleet.promotion.driver``: ``_hold_previous_images`` when it
updates its target, ``PromotionRun.settle`` releasing them once undone):
retention passes keep such an image while the promotion can still be
rolled back, and retire it once the hold is released and nothing else
names it. Real rows on SQLite and PostgreSQL, the in-memory Glance of
test_retention."""

import datetime
import types
import uuid

from heat_lite.common import states as st
from heat_lite.db import image_holds, image_needs, purge, session
from heat_lite.db import promotions as db_promotions
from heat_lite.engine.fleet.promotion import driver
from tests.unit.db import rows
from tests.unit.engine.test_retention import (  # noqa: F401 - fixtures
    _built,
    _passes,
    _state,
    database,
    world,
)

IMAGE = st.IMAGE
P = st.PROMOTION
OWNER = (str(uuid.uuid4()), 1)


def _promotion(tenant, target):
    """A running promotion of ``tenant`` onto stack ``target``, owned by
    this test's engine life, and its owner-side run."""
    row = {
        "id": str(uuid.uuid4()),
        "tenant": tenant,
        "target_tenant": tenant,
        "username": "u",
        "status": P.IN_PROGRESS,
        "source_stack_id": str(uuid.uuid4()),
        "source_stack_name": "staging",
        "source_template_id": 1,
        "source_template_sha256": "0" * 64,
        "target_stack_id": target,
        "target_stack_name": "prod",
        "created_target": False,
        "spec": {"verify": None, "snapshot": None},
        "engine_id": OWNER[0],
        "epoch": OWNER[1],
    }
    db_promotions.promotion_create(row)
    fence = types.SimpleNamespace(owner=OWNER, generation=0)
    return driver.PromotionRun(db_promotions.promotion_get(row["id"]), fence)


def _kept_by(image_id):
    return [
        r["kind"]
        for r in image_needs.needed([image_id], lambda a: 0)[image_id]
    ]


def test_a_promotion_s_previous_image_is_kept_until_it_is_undone(
    world,  # noqa: F811 - fixture
):
    tenant, images, _, _ = world
    target, record = rows.stack()
    previous, promoted = _built(tenant), _built(tenant)
    image_holds.use(tenant, [previous], record_id=record)

    # The promotion starts updating its target: it holds what runs now.
    run = _promotion(tenant, target)
    driver.PromotionDriver._hold_previous_images(
        run, {"target_stack_id": target}
    )
    # The update replaced the image: the record names the promoted one.
    image_holds.use(tenant, [promoted], record_id=record)
    image_holds.record_images_now(tenant, record, [promoted])
    assert _kept_by(previous) == ["promotion"]

    # Passes past the grace, while running and once COMPLETE (a
    # COMPLETE promotion can still be rolled back): kept, never hidden.
    _passes(world, 3, seconds=7200)
    run.settle(P.COMPLETE, "gate passed")
    _passes(world, 3, seconds=7200)
    assert _state(tenant, previous) == IMAGE.NEEDED
    assert ("hide", previous) not in images.calls

    # Rolled back: the hold ends (the target's records name the image
    # again: the rollback's own update keeps it from now).
    assert db_promotions.promotion_request_rollback(run.id, tenant, OWNER)
    run.settle(P.ROLLED_BACK, "rolled back")
    assert _kept_by(previous) == []
    # Nothing names it any more (the stack moved on): retired.
    _passes(world, 3, seconds=7200)
    assert _state(tenant, previous) == IMAGE.DELETED
    assert ("delete", previous) in images.calls


def _promoted(tenant, target, record, onto):
    """A promotion of ``target`` that holds what its record names now,
    then moves the record onto image ``onto`` (its update)."""
    run = _promotion(tenant, target)
    driver.PromotionDriver._hold_previous_images(
        run, {"target_stack_id": target}
    )
    image_holds.use(tenant, [onto], record_id=record)
    image_holds.record_images_now(tenant, record, [onto])
    return run


def test_a_newer_complete_promotion_releases_the_older_ones_holds(
    world,  # noqa: F811 - fixture
):
    tenant, images, _, _ = world
    target, record = rows.stack()
    first_image, second_image, third_image = (_built(tenant) for _ in "123")
    image_holds.use(tenant, [first_image], record_id=record)
    first = _promoted(tenant, target, record, second_image)
    first.settle(P.COMPLETE, "gate passed")

    # A newer one runs: it could still fail (the first would then be
    # the newest again), so the first keeps its hold meanwhile.
    second = _promoted(tenant, target, record, third_image)
    assert _kept_by(first_image) == ["promotion"]
    assert not db_promotions.promotion_request_rollback(
        first.id, tenant, OWNER
    )
    # COMPLETE: the first is overtaken for good, its hold goes in the
    # same write; the second holds what it would bring back.
    second.settle(P.COMPLETE, "gate passed")
    assert _kept_by(first_image) == []
    assert _kept_by(second_image) == ["promotion"]
    # Even once the newer one is rolled back, the first never rolls back.
    assert db_promotions.promotion_request_rollback(second.id, tenant, OWNER)
    second.settle(P.ROLLED_BACK, "rolled back")
    assert not db_promotions.promotion_request_rollback(
        first.id, tenant, OWNER
    )
    # What nothing names any more is retired.
    _passes(world, 3, seconds=7200)
    assert _state(tenant, first_image) == IMAGE.DELETED
    assert ("delete", first_image) in images.calls
    assert _state(tenant, third_image) == IMAGE.NEEDED


def test_a_newer_failed_promotion_leaves_the_older_one_s_holds(
    world,  # noqa: F811 - fixture
):
    tenant, _, _, _ = world
    target, record = rows.stack()
    old, promoted, failed = (_built(tenant) for _ in "123")
    image_holds.use(tenant, [old], record_id=record)
    first = _promoted(tenant, target, record, promoted)
    first.settle(P.COMPLETE, "gate passed")
    # The newer one's gate failed: its update rolled the target back.
    second = _promoted(tenant, target, record, failed)
    image_holds.record_images_now(tenant, record, [promoted])
    second.settle(P.FAILED, "gate failed")
    assert _kept_by(old) == ["promotion"]
    assert _kept_by(failed) == []
    # The first is the newest that changed the target: it rolls back.
    assert db_promotions.promotion_request_rollback(first.id, tenant, OWNER)


def test_purging_the_target_releases_its_promotions_holds(
    world,  # noqa: F811 - fixture
):
    tenant, _, _, _ = world
    target, record = rows.stack()
    old, promoted = _built(tenant), _built(tenant)
    image_holds.use(tenant, [old], record_id=record)
    run = _promoted(tenant, target, record, promoted)
    run.settle(P.COMPLETE, "gate passed")
    assert _kept_by(old) == ["promotion"]
    # Deleted long ago (no other test's stack is as old), then purged.
    long_ago = datetime.datetime(2000, 1, 1)
    with session.transaction() as conn:
        conn.execute(
            rows.STACK.update()
            .where(rows.STACK.c.id == target)
            .values(deleted_at=long_ago)
        )
    purge.purge_deleted(long_ago + datetime.timedelta(days=1))
    assert _kept_by(old) == [] and _kept_by(promoted) == []
