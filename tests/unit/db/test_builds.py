"""Builds' rows (``db.builds``) on SQLite, PostgreSQL and MariaDB: a
replayed delivery refused by the database, converge on the newest, the
fenced claim bounded per branch and per app, cancel, logs, purge."""

import datetime
import threading
import uuid

import pytest

from harness import git_repo
from heat_lite.common import exception
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import apps as db_apps
from heat_lite.db import builds as db_builds
from heat_lite.db import models, purge, session

OWNER = ("engine-a", 1)


@pytest.fixture
def app(database):
    tenant = uuid.uuid4().hex
    return db_apps.app_create(
        {"id": str(uuid.uuid4()), "tenant": tenant, "name": "shop"},
        {"source": {"url": "file:///srv/a", "branches": ["*"]}},
    )


def _push(app, branch="main", delivery=None, commit="a" * 40):
    return git_repo.queue_build(app, commit, branch, delivery, "artifact")


def _status(app, build):
    return db_builds.build_get(app["tenant"], app["id"], build["id"])["status"]


def test_a_push_is_queued_and_readable_in_its_project_only(app):
    build = _push(app)
    assert build["status"] == B.QUEUED and not build["cancel_requested"]
    assert build["engine_id"] is None and build["source"] == "push"
    with pytest.raises(exception.BuildNotFound):
        db_builds.build_get("other", app["id"], build["id"])
    with pytest.raises(exception.BuildNotFound):
        db_builds.build_get(app["tenant"], "other-app", build["id"])


def test_a_replayed_delivery_is_refused_pushes_never_conflict(app):
    _push(app, delivery="d-1")
    with pytest.raises(exception.DuplicateDelivery) as err:
        _push(app, delivery="d-1")
    assert err.value.code == 409
    _push(app)
    _push(app)  # two authenticated pushes: no delivery id, no conflict
    assert len(db_builds.build_list(app["tenant"], app["id"])) == 3


def test_a_push_supersedes_the_older_queued_builds_of_its_branch(app):
    old = [_push(app) for _ in range(3)]
    other = _push(app, branch="dev")
    new = _push(app)
    assert [_status(app, b) for b in old] == [B.SUPERSEDED] * 3
    assert _status(app, other) == B.QUEUED
    assert _status(app, new) == B.QUEUED
    listed = db_builds.build_list(app["tenant"], app["id"], branch="main")
    assert [b["id"] for b in listed] == [new["id"]] + [
        b["id"] for b in reversed(old)
    ]
    queued = db_builds.build_list(app["tenant"], app["id"], status="QUEUED")
    assert {b["id"] for b in queued} == {new["id"], other["id"]}


def test_list_pages_newest_first(app):
    ids = [_push(app, branch="b%d" % i)["id"] for i in range(5)]
    first = db_builds.build_list(app["tenant"], app["id"], limit=2)
    rest = db_builds.build_list(
        app["tenant"], app["id"], marker=first[-1]["id"]
    )
    assert [b["id"] for b in first + rest] == ids[::-1]
    with pytest.raises(exception.Invalid):
        db_builds.build_list(app["tenant"], app["id"], marker="nope")


def test_one_running_build_per_branch_and_a_bound_per_app(app):
    main = _push(app)
    assert db_builds.build_claim(main, OWNER, max_per_app=2)
    assert not db_builds.build_claim(main, ("engine-b", 1), 2)  # taken
    newer = _push(app)
    assert not db_builds.build_claim(newer, OWNER, 2)  # the lane is busy
    dev = _push(app, branch="dev")
    assert db_builds.build_claim(dev, OWNER, 2)
    third = _push(app, branch="third")
    assert not db_builds.build_claim(third, OWNER, 2)  # the app is full
    assert db_builds.build_running_count(app["id"]) == 2
    assert db_builds.build_transition(main["id"], OWNER, B.FAILED, "boom")
    assert db_builds.build_claim(newer, OWNER, 2)  # lane and slot free
    row = db_builds.build_get_by_id(newer["id"])
    assert row["status"] == B.BUILDING and row["started_at"] is not None


def _claimable(app, max_per_app):
    found = db_builds.builds_claimable(10000, max_per_app)
    return {b["id"]: b["running"] for b in found if b["app_id"] == app["id"]}


def _requeue(build):
    """``build`` back to QUEUED, as two pushes stored at the same moment
    leave the older one (neither saw the other's row)."""
    table = models.AppBuild.__table__
    with session.transaction() as conn:
        conn.execute(
            table.update()
            .where(table.c.id == build["id"])
            .values(status=B.QUEUED, finished_at=None)
        )


def test_claimable_is_the_newest_queued_build_of_each_free_branch(app):
    main = _push(app)
    dev = _push(app, branch="dev")
    assert _claimable(app, 2) == {main["id"]: 0, dev["id"]: 0}
    assert db_builds.build_claim(main, OWNER, 2)
    newer = _push(app)
    # main's lane is busy: neither its newer push is claimable
    assert _claimable(app, 2) == {dev["id"]: 1}
    # the app's one slot is taken: nothing of it is
    assert _claimable(app, 1) == {}
    assert db_builds.build_transition(main["id"], OWNER, B.FAILED, "boom")
    assert _claimable(app, 1) == {newer["id"]: 0, dev["id"]: 0}


def test_a_claim_supersedes_the_older_queued_builds_of_its_branch(app):
    old = _push(app)
    new = _push(app)
    _requeue(old)  # a race left both QUEUED
    assert set(_claimable(app, 1)) == {new["id"]}
    assert db_builds.build_claim(new, OWNER, 1)
    assert _status(app, old) == B.SUPERSEDED
    assert _claimable(app, 1) == {}
    row = db_builds.build_get_by_id(old["id"])
    assert row["status_reason"] == "Superseded by build %s" % new["id"]
    assert row["finished_at"] is not None


def test_concurrent_claims_of_one_branch_one_wins(app):
    # Two builds of a branch QUEUED at once (two pushes at the same time
    # on two API nodes would leave at most this): only one may run.
    builds = [_push(app, branch="b%d" % i) for i in range(2)]
    for b in builds:  # the same lane for both, as a race would leave
        b["branch"] = "main"
    results = []

    def claim(build):
        results.append(db_builds.build_claim(build, OWNER, 10))

    threads = [threading.Thread(target=claim, args=(b,)) for b in builds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, True]


def test_transitions_are_fenced_and_follow_the_vocabulary(app):
    build = _push(app)
    db_builds.build_claim(build, OWNER, 1)
    assert not db_builds.build_transition(
        build["id"], ("engine-b", 1), B.UPLOADING
    )
    assert not db_builds.build_transition(build["id"], OWNER, B.DEPLOYED)
    assert db_builds.build_record(build["id"], OWNER, image_id="img-1")
    assert db_builds.build_transition(build["id"], OWNER, B.UPLOADING)
    assert db_builds.build_transition(
        build["id"],
        OWNER,
        B.DEPLOYING,
        stack_id="s-1",
        verification={"status": "UPDATING"},
    )
    row = db_builds.build_get_by_id(build["id"])
    assert row["image_id"] == "img-1" and row["stack_id"] == "s-1"
    assert row["verification"] == {"status": "UPDATING"}
    assert db_builds.build_transition(
        build["id"], OWNER, B.REJECTED, "check failed"
    )
    row = db_builds.build_get_by_id(build["id"])
    assert row["status_reason"] == "check failed" and row["lane"] is None
    assert row["finished_at"] is not None
    assert not db_builds.build_transition(build["id"], OWNER, B.FAILED)


def test_a_newer_push_is_seen_before_deploying(app):
    build = _push(app)
    db_builds.build_claim(build, OWNER, 1)
    assert not db_builds.build_newer_exists(build)
    _push(app, branch="dev")
    assert not db_builds.build_newer_exists(build)
    _push(app)
    assert db_builds.build_newer_exists(build)


def test_cancel_queued_at_once_running_on_request_final_refused(app):
    queued = _push(app, branch="q")
    cancelled = db_builds.build_cancel(app["tenant"], app["id"], queued["id"])
    assert cancelled["status"] == B.CANCELLED
    running = _push(app)
    db_builds.build_claim(running, OWNER, 2)
    asked = db_builds.build_cancel(app["tenant"], app["id"], running["id"])
    assert asked["status"] == B.BUILDING and asked["cancel_requested"]
    assert db_builds.build_transition(running["id"], OWNER, B.CANCELLED)
    with pytest.raises(exception.BuildFinished) as err:
        db_builds.build_cancel(app["tenant"], app["id"], running["id"])
    assert err.value.code == 409
    with pytest.raises(exception.BuildNotFound):
        db_builds.build_cancel("other", app["id"], running["id"])


def test_builds_of_a_dead_engine_are_taken_over_once(app):
    # engine-dead has no live service row: its builds are orphans
    build = _push(app)
    db_builds.build_claim(build, ("engine-dead", 1), 1)
    orphans = [
        o
        for o in db_builds.builds_to_take_over("engine-b")
        if o["id"] == build["id"]
    ]
    assert len(orphans) == 1
    seen = (orphans[0]["engine_id"], orphans[0]["epoch"])
    assert db_builds.build_take_over(build["id"], seen, ("engine-b", 1))
    assert not db_builds.build_take_over(build["id"], seen, ("engine-c", 1))
    assert db_builds.build_owned(build["id"], ("engine-b", 1))
    assert not db_builds.build_transition(
        build["id"], ("engine-dead", 1), B.FAILED
    )


def test_log_is_appended_in_chunks_and_read_from_an_offset(app):
    build = _push(app)
    assert db_builds.build_log_read(build["id"]) == ("", 0)
    db_builds.build_log_append(build["id"], "line one\n")
    big = "".join("%05d\n" % i for i in range(5000))  # 30000 characters
    db_builds.build_log_append(build["id"], big)
    db_builds.build_log_append(build["id"], "done ✓\n")
    whole = "line one\n" + big + "done ✓\n"
    assert db_builds.build_log_read(build["id"]) == (whole, len(whole))
    text, nxt = db_builds.build_log_read(build["id"], 5, limit=10000)
    assert (text, nxt) == (whole[5:10005], 10005)
    text, nxt = db_builds.build_log_read(build["id"], nxt)
    assert text == whole[10005:] and nxt == len(whole)
    assert db_builds.build_log_read(build["id"], nxt) == ("", nxt)


def test_purge_removes_the_builds_and_logs_of_deleted_apps(app):
    build = _push(app)
    db_builds.build_log_append(build["id"], "x")
    db_apps.app_delete(app["tenant"], app["id"])
    later = models.utcnow() + datetime.timedelta(seconds=1)
    counts = purge.purge_deleted(later, tenant=app["tenant"])
    assert counts["builds"] == 1 and counts["apps"] == 1
    with pytest.raises(exception.BuildNotFound):
        db_builds.build_get(app["tenant"], app["id"], build["id"])
    assert db_builds.build_log_read(build["id"]) == ("", 0)


def test_a_build_s_log_flushed_by_many_threads_keeps_every_line(database):
    """The build's thread and its log timer flush at once (the 100-app
    benchmark lost a build to a duplicate sequence number on
    PostgreSQL): every line lands once, in the order each thread wrote
    it, whatever the interleaving."""
    import types

    from heat_lite.engine.fleet.app import run as run_mod

    build_id = str(uuid.uuid4())
    run = run_mod.BuildRun(
        {"id": build_id, "tenant": "t"},
        {"username": "u"},
        types.SimpleNamespace(owner=("e", 1), generation=0),
    )
    errors = []
    start = threading.Barrier(8)

    def writer(n):
        try:
            start.wait()
            for i in range(15):
                run.log("w%d-%02d" % (n, i))
                run.flush()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    text, _ = db_builds.build_log_read(build_id, 0, 1 << 20)
    lines = text.splitlines()
    assert sorted(lines) == sorted(
        "w%d-%02d" % (n, i) for n in range(8) for i in range(15)
    )
    for n in range(8):
        mine = [line for line in lines if line.startswith("w%d-" % n)]
        assert mine == sorted(mine)
