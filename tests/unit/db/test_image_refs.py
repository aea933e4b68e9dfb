"""Image retention's records (``db.image_holds``) on SQLite, PostgreSQL
and MariaDB: what keeps an image, the use that revives or is refused,
and the race between a use and the retirement pass, in both orders."""

import datetime
import threading
import uuid

import pytest
import sqlalchemy as sa

from harness import databases, polling
from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import (
    image_holds,
    image_moves,
    image_needs,
    managed_images,
    models,
    session,
)
from heat_lite.db import snapshots as db_snapshots
from tests.unit.db import rows

IMAGE = st.IMAGE
RECORD_IMAGE = models.RecordImage.__table__
REFERENCE = models.ImageReference.__table__
RESOURCE = models.Resource.__table__


@pytest.fixture
def tenant(database):
    return "t" + uuid.uuid4().hex[:8]


def _image(tenant, app="app", branch="main", name="img", **values):
    """An image a build made; the build is over (its hold released)."""
    image_id, build = str(uuid.uuid4()), str(uuid.uuid4())
    managed_images.image_add(
        dict(
            {
                "id": image_id,
                "tenant": tenant,
                "app_id": app,
                "branch": branch,
                "build_id": build,
                "name": name,
            },
            **values,
        )
    )
    assert image_holds.release("build", build) == 1
    return image_id


def _row(tenant, image_id):
    return managed_images.image_get(tenant, image_id)


def _release_build(image_id, tenant):
    """The build's own hold ends: only references keep it now."""
    row = _row(tenant, image_id)
    assert image_moves.move(
        image_id, row["generation"], IMAGE.NEEDED, IMAGE.UNNEEDED
    )


def _references(image_id):
    with session.transaction(writer=False) as conn:
        return (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(REFERENCE)
                .where(REFERENCE.c.image_id == image_id)
            ).scalar()
            + conn.execute(
                sa.select(sa.func.count())
                .select_from(RECORD_IMAGE)
                .where(RECORD_IMAGE.c.image_id == image_id)
            ).scalar()
        )


def never(app_id):
    return 0


def test_an_image_heat_lite_did_not_build_is_left_alone(tenant):
    foreign = str(uuid.uuid4())
    assert image_holds.use(tenant, [foreign], kind="app", holder="a") == []
    assert _references(foreign) == 0
    assert image_needs.needed([foreign], never) == {foreign: []}


def test_a_record_keeps_its_image_while_the_record_row_exists(tenant):
    image_id = _image(tenant)
    stack_id, record = rows.stack()
    assert (
        image_holds.use(tenant, [image_id, image_id], record_id=record) == []
    )
    # Used twice (a node run again): one reference.
    image_holds.use(tenant, [image_id], record_id=record)
    assert _references(image_id) == 1
    [why] = image_needs.needed([image_id], never)[image_id]
    assert why == {
        "kind": "record",
        "resource_id": record,
        "stack_id": stack_id,
        "name": "r0",
        "role": "current",
    }
    with session.transaction() as conn:
        conn.execute(RESOURCE.delete().where(RESOURCE.c.id == record))
    assert image_needs.needed([image_id], never) == {image_id: []}


def test_other_holders_keep_it_until_they_release_it(tenant):
    image_id = _image(tenant)
    # (Snapshots and rollbacks count while their holder row says so:
    # below.)
    kinds = [k for k in image_holds.KINDS if k not in ("snapshot", "rollback")]
    for kind in kinds:
        image_holds.use(tenant, [image_id], kind=kind, holder=kind + "-1")
    why = image_needs.needed([image_id], never)[image_id]
    assert sorted(r["kind"] for r in why) == sorted(kinds)
    for kind in kinds:
        assert image_holds.release(kind, kind + "-1") == 1
    assert image_needs.needed([image_id], never) == {image_id: []}
    with pytest.raises(ValueError):
        image_holds.use(tenant, [image_id], kind="nonsense", holder="x")
    with pytest.raises(ValueError):
        image_holds.use(tenant, [image_id])


def test_keep_last_counts_deployed_images_of_the_app_and_branch(tenant):
    app = "app-" + tenant
    deployed = []
    for day in range(1, 6):
        image_id = _image(tenant, app=app)
        managed_images.image_deployed(
            image_id, models.utcnow().replace(year=2026, month=1, day=day)
        )
        deployed.append(image_id)
    never_deployed = _image(tenant, app=app)
    other_branch = _image(tenant, app=app, branch="dev")
    managed_images.image_deployed(other_branch)
    ids = deployed + [never_deployed, other_branch]
    why = image_needs.needed(ids, lambda app_id: 3)
    ranks = {
        i: [r["rank"] for r in why[i] if r["kind"] == "keep_last"] for i in ids
    }
    assert [ranks[i] for i in deployed] == [[], [], [3], [2], [1]]
    assert ranks[never_deployed] == [] and ranks[other_branch] == [1]
    # An image on its way out counts no more: the next one moves up.
    newest = _row(tenant, deployed[-1])
    _release_build(deployed[-1], tenant)
    newest = _row(tenant, deployed[-1])
    assert image_moves.move(
        deployed[-1], newest["generation"], IMAGE.UNNEEDED, IMAGE.DELETING
    )
    why = image_needs.needed(deployed, lambda app_id: 3)
    assert [r["rank"] for r in why[deployed[1]]] == [3]


def test_a_use_bumps_the_generation_so_a_pass_that_read_before_loses(tenant):
    image_id = _image(tenant)
    _release_build(image_id, tenant)
    seen = _row(tenant, image_id)
    image_holds.use(tenant, [image_id], kind="snapshot", holder="s1")
    assert not image_moves.move(
        image_id, seen["generation"], IMAGE.UNNEEDED, IMAGE.HIDDEN
    )
    row = _row(tenant, image_id)
    assert row["state"] == IMAGE.NEEDED
    assert row["generation"] == seen["generation"] + 1


def test_a_use_revives_a_hidden_image(tenant):
    image_id = _image(tenant)
    _release_build(image_id, tenant)
    row = _row(tenant, image_id)
    now = models.utcnow()
    assert image_moves.move(
        image_id,
        row["generation"],
        IMAGE.UNNEEDED,
        IMAGE.HIDDEN,
        hidden_at=now,
        delete_after=now,
    )
    assert image_holds.use(tenant, [image_id], kind="rollout", holder="r") == [
        image_id
    ]
    row = _row(tenant, image_id)
    assert (row["state"], row["delete_after"]) == (IMAGE.NEEDED, None)
    assert row["hidden_at"] is not None  # until Glance shows it again
    image_moves.unhidden(image_id)
    assert _row(tenant, image_id)["hidden_at"] is None


def test_a_use_of_a_retired_image_is_refused_and_leaves_nothing(tenant):
    kept, retired = _image(tenant), _image(tenant)
    _release_build(retired, tenant)
    row = _row(tenant, retired)
    assert image_moves.move(
        retired, row["generation"], IMAGE.UNNEEDED, IMAGE.DELETING
    )
    with pytest.raises(exception.ImageRetired):
        image_holds.use(tenant, [kept, retired], kind="promotion", holder="p")
    assert _references(kept) == _references(retired) == 0
    assert _row(tenant, kept)["generation"] == 0


def test_only_the_vocabulary_s_moves_are_made(tenant):
    image_id = _image(tenant)
    with pytest.raises(ValueError):
        image_moves.move(image_id, 0, IMAGE.NEEDED, IMAGE.DELETED)


def test_candidates_page_through_images_not_deleted(tenant):
    made = sorted(_image(tenant) for _ in range(5))
    seen, after = [], None
    while True:
        page = managed_images.candidates(after, limit=2, tenant=tenant)
        if not page:
            break
        seen.extend(r["id"] for r in page)
        after = page[-1]["id"]
    assert seen == made


def _unneeded(tenant):
    image_id = _image(tenant)
    _release_build(image_id, tenant)
    return image_id, _row(tenant, image_id)["generation"]


def _skip_sqlite(kind):
    if kind == "sqlite":
        pytest.skip("SQLite serialises its writers: no interleaving")


def interleaved(database, first, second, what):
    """``first(conn)`` writes in a transaction left open; ``second()``
    runs in a thread meanwhile; once it waits for a row lock ``first``
    commits. :returns: what ``second`` returned (or raised)."""
    kind, engine = database
    _skip_sqlite(kind)
    holder = engine.connect()
    outcome = []

    def run():
        try:
            outcome.append(second())
        except Exception as exc:  # noqa: BLE001 - the caller looks at it
            outcome.append(exc)

    try:
        holder.begin()
        first(holder)
        racer = threading.Thread(target=run)
        racer.start()
        polling.until(lambda: databases.lock_waits(engine, kind), 30, what)
        holder.commit()
        racer.join(30)
    finally:
        holder.close()
    [result] = outcome
    return result


def test_race_a_use_holding_the_row_makes_the_pass_s_move_fail(
    database, tenant
):
    """The pass read the image unneeded; a use then holds the row (not
    committed) when the pass writes DELETING: the pass waits, sees the
    bumped generation and moves nothing; the image stays, NEEDED."""
    image_id, seen = _unneeded(tenant)
    moved = interleaved(
        database,
        lambda conn: image_holds.use_in(
            conn, tenant, [image_id], kind="build", holder="b"
        ),
        lambda: image_moves.move(
            image_id, seen, IMAGE.UNNEEDED, IMAGE.DELETING
        ),
        "the pass's lock wait",
    )
    assert moved is False
    assert _row(tenant, image_id)["state"] == IMAGE.NEEDED
    assert _references(image_id) == 1


def test_race_a_pass_holding_the_row_makes_the_use_fail(database, tenant):
    """The pass moved the image to DELETING (not committed) when a use
    comes: the use waits, then finds it retired and is refused, writing
    no reference; the pass goes on to delete it."""
    image_id, seen = _unneeded(tenant)

    def move(conn):
        assert image_moves.move_in(
            conn, image_id, seen, IMAGE.UNNEEDED, IMAGE.DELETING
        )

    used = interleaved(
        database,
        move,
        lambda: image_holds.use(
            tenant, [image_id], kind="promotion", holder="p"
        ),
        "the use's lock wait",
    )
    assert isinstance(used, exception.ImageRetired)
    assert _row(tenant, image_id)["state"] == IMAGE.DELETING
    assert _references(image_id) == 0


def test_an_image_named_by_name_is_used_by_id(tenant):
    named = _image(tenant, name="shop-v2")
    other_project = _image("o" + tenant, name="shop-v2")
    _, record = rows.stack()
    image_holds.use(tenant, ["shop-v2", "not-ours"], record_id=record)
    assert [r["kind"] for r in image_needs.needed([named], never)[named]] == [
        "record"
    ]
    assert image_needs.needed([other_project], never)[other_project] == []


def test_a_snapshot_keeps_the_images_of_its_stack_while_it_exists(tenant):
    image_id, gone = _image(tenant), _image(tenant)
    stack_id, record = rows.stack()
    image_holds.use(tenant, [image_id], record_id=record)
    snapshot_id = str(uuid.uuid4())
    db_snapshots.snapshot_create(
        {
            "id": snapshot_id,
            "stack_id": stack_id,
            "tenant": tenant,
            "name": "s",
            "traversal": "trav",
            "status": "COMPLETE",
        }
    )
    assert image_holds.hold_stack_images(
        tenant, [stack_id], "snapshot", snapshot_id
    ) == [image_id]
    assert image_needs.needed([gone], never)[gone] == []
    with session.transaction() as conn:
        conn.execute(RESOURCE.delete().where(RESOURCE.c.id == record))
    assert image_needs.needed([image_id], never)[image_id] == [
        {"kind": "snapshot", "holder": snapshot_id}
    ]
    assert db_snapshots.snapshot_delete(stack_id, snapshot_id)
    assert image_needs.needed([image_id], never)[image_id] == []


def test_an_update_in_place_ends_the_record_s_use_of_its_old_image(tenant):
    old, new = _image(tenant), _image(tenant)
    _, record = rows.stack()
    image_holds.use(tenant, [old], record_id=record)
    image_holds.use(tenant, [new], record_id=record)  # the update starts
    assert [r["kind"] for r in image_needs.needed([old], never)[old]] == [
        "record"
    ]
    image_holds.record_images_now(tenant, record, [new])  # and is done
    assert image_needs.needed([old], never)[old] == []
    assert [r["kind"] for r in image_needs.needed([new], never)[new]] == [
        "record"
    ]
    image_holds.record_images_now(tenant, record, [])
    assert image_needs.needed([new], never)[new] == []


def _template_of(stack_id):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(rows.STACK.c.raw_template_id).where(
                rows.STACK.c.id == stack_id
            )
        ).scalar()


def test_a_record_of_any_role_keeps_it_while_its_stack_lives(tenant):
    """Current, replaced, pending-delete and history records (the last
    within ``[engine] max_record_versions``: a trimmed one's row is
    gone) all keep the images they name; once the stack is deleted its
    history records (kept until the purge) keep nothing."""
    stack_id, current = rows.stack()
    template = _template_of(stack_id)
    with session.transaction() as conn:
        records = {"current": current}
        for role in ("replaced", "pending-delete", "history"):
            records[role] = rows.record(
                conn, stack_id, template, "r-" + role, role=role
            )
    images = {role: _image(tenant) for role in records}
    for role, record in records.items():
        image_holds.use(tenant, [images[role]], record_id=record)
    why = image_needs.needed(list(images.values()), never)
    assert {
        role: [(r["kind"], r["role"]) for r in why[images[role]]]
        for role in records
    } == {role: [("record", role)] for role in records}
    with session.transaction() as conn:
        conn.execute(
            rows.STACK.update()
            .where(rows.STACK.c.id == stack_id)
            .values(deleted_at=models.utcnow())
        )
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.stack_id == stack_id)
            .values(role="history")
        )
    assert image_needs.needed(list(images.values()), never) == {
        i: [] for i in images.values()
    }


def _set_stack(stack_id, **values):
    with session.transaction() as conn:
        conn.execute(
            rows.STACK.update()
            .where(rows.STACK.c.id == stack_id)
            .values(**values)
        )


def test_an_update_in_place_holds_the_old_image_until_the_stack_settles(
    tenant,
):
    """A record of a nested stack updated in place off an image: its
    root's operation can still fail and roll back onto it, so the image
    is held by the root (``rollback``) while the root is IN_PROGRESS or
    FAILED, and no more once it is COMPLETE on its newest template (or
    deleted); a pass then drops the settled holds."""
    old, new = _image(tenant), _image(tenant)
    root, _ = rows.stack()
    nested, record = rows.stack()
    template = _template_of(root)
    _set_stack(nested, owner_id=root)
    image_holds.use(tenant, [old], record_id=record)
    image_holds.use(tenant, [new], record_id=record)
    image_holds.record_images_now(tenant, record, [new], stack_id=nested)
    assert image_needs.needed([old], never)[old] == [
        {"kind": "rollback", "holder": root}
    ]
    # The nested stack alone settling changes nothing: its root rolls it
    # back.
    _set_stack(nested, status="COMPLETE", prev_raw_template_id=None)
    _set_stack(root, action="UPDATE", status="FAILED")
    assert [r["kind"] for r in image_needs.needed([old], never)[old]] == [
        "rollback"
    ]
    # The rollback done: COMPLETE on the template it rolled back to.
    _set_stack(
        root, action="ROLLBACK", status="COMPLETE",
        prev_raw_template_id=template,
    )  # fmt: skip
    assert image_needs.needed([old], never)[old] == []
    assert image_holds.release_settled_rollbacks() >= 1
    assert _references(old) == 0
    assert [r["kind"] for r in image_needs.needed([new], never)[new]] == [
        "record"
    ]


def test_a_deleted_stack_holds_nothing_for_its_rollback(tenant):
    old = _image(tenant)
    stack_id, record = rows.stack()
    image_holds.use(tenant, [old], record_id=record)
    image_holds.record_images_now(tenant, record, [], stack_id=stack_id)
    assert [r["kind"] for r in image_needs.needed([old], never)[old]] == [
        "rollback"
    ]
    _set_stack(stack_id, deleted_at=models.utcnow())
    assert image_needs.needed([old], never)[old] == []


def _record_references(records):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(sa.func.count())
            .select_from(RECORD_IMAGE)
            .where(RECORD_IMAGE.c.resource_id.in_(records))
        ).scalar()


def test_trimmed_and_purged_records_leave_no_references(tenant):
    """``record_image`` does not grow with history: a record's rows go
    with the record when history is trimmed and when its stack is
    purged, and a purge of every project sweeps rows an older version
    left behind (a record deleted without them)."""
    from heat_lite.db import purge

    stack_id, current = rows.stack()
    template = _template_of(stack_id)
    with session.transaction() as conn:
        old = [
            rows.record(
                conn, stack_id, template, "r0", role="history", version=-v
            )
            for v in (1, 2, 3)
        ]
    image_id = _image(tenant)
    for record in [current, *old]:
        image_holds.use(tenant, [image_id], record_id=record)
    assert _record_references([current, *old]) == 4

    with session.transaction() as conn:
        purge.history_trim(conn, stack_id, keep=2)
    with session.transaction(writer=False) as conn:
        left = set(
            conn.execute(
                sa.select(RESOURCE.c.id).where(RESOURCE.c.stack_id == stack_id)
            ).scalars()
        )
    # The current record and the newest history version stay.
    assert left == {current, old[0]}
    assert _record_references([current, *old]) == 2
    assert _record_references(sorted(left)) == 2

    # An orphan, as a version without forget_records left it.
    other_stack, orphan = rows.stack()
    image_holds.use(tenant, [image_id], record_id=orphan)
    with session.transaction() as conn:
        conn.execute(RESOURCE.delete().where(RESOURCE.c.id == orphan))
    assert _record_references([orphan]) == 1

    _set_stack(stack_id, deleted_at=models.utcnow())
    counts = purge.purge_deleted(models.utcnow() + datetime.timedelta(1))
    assert _record_references(sorted(left) + [orphan]) == 0
    # (other tests of this database may have left orphans too)
    assert counts["image_references"] >= 3
    assert image_needs.needed([image_id], never) == {image_id: []}
