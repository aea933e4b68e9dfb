"""Builds in one engine process (SQLite file, fake:// transport), from a
real git repository on disk through the real ``filesystem`` builder
(mkfs.ext4, qemu-img) to the branch's stack as a verified update.

The image store is ``harness.image_store.MemoryImageStore``: Glance
cannot run here without the test cloud (tests/functional/test_cloud_apps.py
does the same against the real one). Everything else is real: the
claim, the converge-on-newest, the verified update and its rollback.
"""

import threading
import uuid

import pytest

from harness import git_repo, image_store, inprocess, polling
from heat_lite import conf
from heat_lite.common import app_spec, context
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import apps as db_apps
from heat_lite.db import builds as db_builds
from heat_lite.db import stacks as db_stacks
from heat_lite.engine.fleet.app import builder_rpcapi

CONF = conf.CONF
TEMPLATE = git_repo.app_template(
    {
        "type": "OS::Heat::TestResource",
        "properties": {"value": {"get_param": "image"}},
    },
    {"image": {"value": {"get_attr": ["server", "output"]}}},
)
# An output check waits for its value until the timeout: a broken
# commit's verification fails after it.
VERIFY = {"timeout": 3, "checks": [{"type": "output", "output": "healthy",
                                     "equals": True}]}  # fmt: skip
STORE = image_store.MemoryImageStore()


def _prepare(proc):
    proc.builds.driver._store = STORE
    proc.builds.driver.poll = 0.05
    proc.builds.driver.deployer.poll = 0.05
    # The test drives claims and takeovers itself.
    proc.builds.start = proc.builds.keeper.stop


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("builds"),
        {"heartbeat_interval": 0.2, "engine_life_check_timeout": 3.0},
        prepare=_prepare,
        binary="test-builds",
    ) as proc:
        yield proc


@pytest.fixture
def repo(tmp_path):
    CONF.set_override(
        "allowed_sources", ["file://%s/*" % tmp_path], group="apps"
    )
    yield git_repo.BareRepo(tmp_path)
    CONF.clear_override("allowed_sources", group="apps")


def _app(
    repo, name="shop", verify=VERIFY, environment=None, builder="filesystem"
):
    spec = app_spec.parse(
        {
            "name": name,
            "source": {"url": repo.url, "branches": ["main", "dev"]},
            "builder": {"name": builder, "options": {}},
            "template": TEMPLATE,
            "environment": environment or {},
            "image_parameter": "image",
            "verify": verify,
        }
    )
    spec.pop("webhook_secret")
    spec.pop("name")
    tenant = "p" + uuid.uuid4().hex[:8]
    return db_apps.app_create(
        {"id": str(uuid.uuid4()), "tenant": tenant, "name": name,
         "username": "dev"},
        spec,
    )  # fmt: skip


def _push(app, commit, branch="main"):
    return git_repo.queue_build(app, commit, branch)


def _get(build):
    return db_builds.build_get(build["tenant"], build["app_id"], build["id"])


def _finished(engine, build, timeout=60):
    def done():
        engine.builds.claim_queued()
        row = _get(build)
        return row if row["status"] in B.FINISHED else None

    return polling.until(
        done, timeout, lambda: "build finished: %s" % (_get(build),), 0.1
    )


def _log_with(build, text):
    log = db_builds.build_log_read(build["id"])[0]
    return log if text in log else None


def _stack_params(build):
    from heat_lite.db import templates

    stack = db_stacks.stack_get(_get(build)["stack_id"])
    raw = templates.raw_template_get(stack["raw_template_id"])
    return stack, raw["environment"]["parameters"]


def test_push_build_image_stack_verified_then_an_update(engine, repo):
    app = _app(repo)
    first = _push(app, repo.push({"index.html": "v1\n"}))
    done = _finished(engine, first)
    assert done["status"] == B.DEPLOYED, done
    assert done["verification"]["status"] == "SUCCEEDED"
    image = STORE.images[done["image_id"]]
    assert image["status"] == "active" and image["size"] > 0
    assert image["properties"] == {
        "heat_lite_app": app["id"],
        "heat_lite_build": first["id"],
        "source_ref": "refs/heads/main",
        "source_commit": first["commit"],
    }
    stack, params = _stack_params(first)
    assert stack["name"] == "shop-main"
    assert stack["action"] == "CREATE" and stack["status"] == "COMPLETE"
    assert params["image"] == done["image_id"]
    assert params["source_commit"] == first["commit"]
    assert params["heat_lite_build"] == first["id"]
    # The final line is written just after the final state.
    log = polling.until(
        lambda: _log_with(first, "build DEPLOYED"), 10, "the final line"
    )
    assert "fetching %s" % first["commit"] in log
    assert "filesystem: ext4" in log

    second = _push(app, repo.push({"index.html": "v2\n"}))
    done2 = _finished(engine, second)
    assert done2["status"] == B.DEPLOYED, done2
    stack, params = _stack_params(second)
    assert stack["id"] == done["stack_id"]
    assert stack["action"] == "UPDATE" and stack["status"] == "COMPLETE"
    assert params["image"] == done2["image_id"] != done["image_id"]


def test_a_failed_verification_rejects_and_rolls_back(engine, repo):
    good = repo.push({"index.html": "good\n"})
    app = _app(repo, name="brk")
    deployed = _finished(engine, _push(app, good))
    assert deployed["status"] == B.DEPLOYED, deployed
    bad = repo.push({"index.html": "bad\n"})
    env = {"parameters": {"broken_commit": bad}}
    spec = dict(app["spec"], environment=env)
    db_apps.app_update(app["tenant"], app["id"], 1, spec)
    rejected = _finished(engine, _push(app, bad))
    assert rejected["status"] == B.REJECTED, rejected
    assert rejected["verification"]["status"] == "ROLLED_BACK"
    assert "healthy" in rejected["status_reason"]
    stack, params = _stack_params(deployed)
    assert stack["status"] == "COMPLETE"
    assert params["image"] == deployed["image_id"]
    assert params["source_commit"] == good


def test_ten_queued_pushes_deploy_only_the_newest(engine, repo):
    app = _app(repo, name="burst", verify=None)
    builds = [_push(app, repo.push({"n": "%d\n" % i})) for i in range(10)]
    newest = _finished(engine, builds[-1])
    assert newest["status"] == B.DEPLOYED, newest
    statuses = [_get(b)["status"] for b in builds[:-1]]
    assert statuses == [B.SUPERSEDED] * 9
    _stack, params = _stack_params(builds[-1])
    assert params["source_commit"] == builds[-1]["commit"]


def test_a_build_that_sees_a_newer_push_before_deploying_stops(engine, repo):
    app = _app(repo, name="race", verify=None)
    first = _push(app, repo.push({"a": "1\n"}))
    STORE.gate.clear()  # the upload waits
    try:
        assert first["id"] in engine.builds.claim_queued()
        polling.until(
            lambda: _get(first)["status"] == B.UPLOADING, 60, "uploading"
        )
        second = _push(app, repo.push({"a": "2\n"}))
    finally:
        STORE.gate.set()
    stopped = _finished(engine, first)
    assert stopped["status"] == B.SUPERSEDED, stopped
    assert stopped["image_id"] is None
    assert _finished(engine, second)["status"] == B.DEPLOYED
    assert stopped["stack_id"] is None


def _claimed(engine, build):
    polling.until(
        lambda: (
            build["id"] in engine.builds.claim_queued()
            or _get(build)["status"] != B.QUEUED
        ),
        60,
        "build %s claimed" % build["id"],
    )


def test_pushes_faster_than_builds_still_deploy(engine, repo):
    """Every build finds a newer push waiting when its image is ready (a
    branch pushed to faster than it builds): the gate drops at most
    ``[apps] max_gate_supersessions`` finished images in a row, then
    deploys one although a newer push waits; after a deploy it may drop
    again."""
    app = _app(repo, name="starve", verify=None)
    builds = [_push(app, repo.push({"s": "0\n"}))]
    for n in range(1, 5):
        current = builds[-1]
        STORE.gate.clear()  # the upload waits for the next push
        try:
            _claimed(engine, current)
            polling.until(
                lambda b=current: _get(b)["status"] == B.UPLOADING,
                60,
                "build %d uploading" % n,
            )
            builds.append(_push(app, repo.push({"s": "%d\n" % n})))
        finally:
            STORE.gate.set()
        _finished(engine, current)
    newest = _finished(engine, builds[-1])
    statuses = [_get(b)["status"] for b in builds]
    assert statuses == [
        B.SUPERSEDED,  # dropped at the gate (1 of 2)
        B.SUPERSEDED,  # dropped at the gate (2 of 2)
        B.DEPLOYED,  # the guard: deployed although build 3 waited
        B.SUPERSEDED,  # the count starts again after a deploy
        B.DEPLOYED,  # the newest
    ], statuses
    assert newest["status"] == B.DEPLOYED
    assert db_builds.build_gate_superseded_count(builds[-1]) == 1


def test_cancel_of_a_running_build(engine, repo):
    app = _app(repo, name="cnl", verify=None)
    build = _push(app, repo.push({"a": "1\n"}))
    STORE.gate.clear()
    try:
        engine.builds.claim_queued()
        polling.until(
            lambda: _get(build)["status"] == B.UPLOADING, 60, "uploading"
        )
        db_builds.build_cancel(app["tenant"], app["id"], build["id"])
    finally:
        STORE.gate.set()
    done = _finished(engine, build)
    assert done["status"] == B.CANCELLED, done
    assert done["image_id"] is None and done["stack_id"] is None


def test_a_dead_engines_build_is_taken_over_and_its_image_deleted(
    engine, repo
):
    app = _app(repo, name="orphan", verify=None)
    build = _push(app, repo.push({"a": "1\n"}))
    dead = ("dead-engine", 7)  # no live service row
    assert db_builds.build_claim(build, dead, 1)
    db_builds.build_transition(build["id"], dead, B.UPLOADING)
    half = STORE.create(None, "half", _Formats, {})
    db_builds.build_record(build["id"], dead, image_id=half)
    assert build["id"] in engine.builds.take_over()
    done = _finished(engine, build)
    assert done["status"] == B.DEPLOYED, done
    assert half in STORE.deleted and done["image_id"] != half
    assert done["engine_id"] == engine.engine_id
    assert not db_builds.build_transition(build["id"], dead, B.FAILED)


class _Formats:
    disk_format = "qcow2"
    container_format = "bare"


def test_a_wake_cast_reaches_the_builder_workers(engine, monkeypatch):
    woken = threading.Event()
    monkeypatch.setattr(engine.builds, "poke", woken.set)
    builder_rpcapi.BuildWorkerAPI().wake(
        context.RequestContext(project_id="p", overwrite=False)
    )
    polling.until(woken.is_set, 30, "the builder workers woken")


def _statements_of_this_thread():
    """A list that grows by one per SQL statement this thread sends."""
    me, sent = threading.get_ident(), []

    def count(*args):
        verb = args[2].lstrip().split(None, 1)[0].upper()
        if threading.get_ident() == me and verb != "BEGIN":
            sent.append(args[2])

    return sent, count


def test_a_wake_tries_only_builds_whose_branch_is_free(engine, repo):
    import sqlalchemy as sa

    from heat_lite.db import session

    other = ("engine-elsewhere", 1)
    apps = [_app(repo, name="busy%d" % n, verify=None) for n in range(20)]
    running = [_push(a, "a" * 40) for a in apps]
    for build in running:
        assert db_builds.build_claim(build, other, 1)
    behind = [_push(a, "b" * 40) for a in apps]
    sent, count = _statements_of_this_thread()
    sa.event.listen(session.get_engine(), "before_cursor_execute", count)
    try:
        assert engine.builds.claim_queued() == []
        # One query found nothing to claim: no claim of the 20 builds
        # waiting behind a running build of their branch was tried.
        assert len(sent) == 1, sent
        assert all(_get(b)["status"] == B.QUEUED for b in behind)
        free = _app(repo, name="free", verify=None)
        build = _push(free, repo.push({"f": "1\n"}))
        del sent[:]
        assert engine.builds.claim_queued() == [build["id"]]
        updates = [s for s in sent if s.lstrip().upper().startswith("UPDATE")]
        assert len(updates) == 2, sent  # the claim, its supersession
    finally:
        sa.event.remove(session.get_engine(), "before_cursor_execute", count)
        for b in running:
            db_builds.build_transition(b["id"], other, B.FAILED, "test over")
        for b in behind:
            db_builds.build_cancel(b["tenant"], b["app_id"], b["id"])
    assert _finished(engine, build)["status"] == B.DEPLOYED


def test_a_build_that_ends_lets_the_next_start_at_once(
    engine, repo, monkeypatch
):
    # One build at a time here: the next may start only once the first
    # has ended, and its ending pokes the claim while its thread is still
    # alive (the wake must not count it).
    CONF.set_override("max_builds_per_engine", 1, group="apps")
    first_app = _app(repo, name="one", verify=None)
    second_app = _app(repo, name="two", verify=None)
    first = _push(first_app, repo.push({"1": "1\n"}))
    claimed = []
    try:
        assert engine.builds.claim_queued() == [first["id"]]
        second = _push(second_app, repo.push({"2": "2\n"}))
        assert engine.builds.claim_queued() == []  # no room
        monkeypatch.setattr(
            engine.builds,
            "poke",
            lambda: claimed.extend(engine.builds.claim_queued()),
        )
        polling.until(lambda: second["id"] in claimed, 60, "second claimed")
        assert _get(first)["status"] == B.DEPLOYED
    finally:
        CONF.clear_override("max_builds_per_engine", group="apps")
    monkeypatch.undo()
    assert _finished(engine, second)["status"] == B.DEPLOYED


def test_the_sweep_at_start_removes_the_scratch_of_builds_not_running(
    engine, repo, tmp_path
):
    """The scratch of its own build that ended goes; a running build's
    stays, and so does a build's it does not know (another deployment's
    on this host: a CI run lost a build's image to that)."""
    import os
    import tempfile

    from heat_lite.apps import scratch

    root = tmp_path / "scratch"
    root.mkdir()
    CONF.set_override("scratch_dir", str(root), group="apps")
    app = _app(repo, name="sweep", verify=None)
    done = _push(app, "c" * 40, branch="dev")
    db_builds.build_cancel(app["tenant"], app["id"], done["id"])
    running = _push(app, "d" * 40)
    owner = ("engine-elsewhere", 2)
    assert db_builds.build_claim(running, owner, 1)
    theirs = str(uuid.uuid4())
    left = {
        b: tempfile.mkdtemp(prefix=scratch.PREFIX + b + "-", dir=str(root))
        for b in (done["id"], running["id"], theirs)
    }
    try:
        removed = engine.builds.sweep_scratch()
    finally:
        CONF.clear_override("scratch_dir", group="apps")
        db_builds.build_transition(running["id"], owner, B.FAILED, "over")
    assert removed == [left[done["id"]]]
    assert sorted(os.listdir(root)) == sorted(
        os.path.basename(left[b]) for b in (running["id"], theirs)
    )


def test_cancel_in_the_middle_of_a_command_kills_it(engine, repo, tmp_path):
    import os
    import shlex
    import sys

    root = tmp_path / "scratch"
    pid_file = tmp_path / "pid"
    # The operator's command: says where it is, then runs until killed.
    script = (
        "import os, time; open(%r, 'w').write(str(os.getpid())); "
        "print('started', flush=True); time.sleep(600)" % str(pid_file)
    )
    CONF.set_override(
        "command_builder", shlex.join([sys.executable, "-c", script]), "apps"
    )
    CONF.set_override("scratch_dir", str(root), group="apps")
    try:
        app = _app(repo, name="cmd", verify=None, builder="command")
        build = _push(app, repo.push({"a": "1\n"}))
        assert engine.builds.claim_queued() == [build["id"]]
        polling.until(
            lambda: _log_with(build, "started"), 60, "the command running"
        )
        pid = int(pid_file.read_text())
        assert os.listdir(root)  # its scratch directory
        db_builds.build_cancel(app["tenant"], app["id"], build["id"])
        done = _finished(engine, build)
    finally:
        CONF.clear_override("command_builder", group="apps")
        CONF.clear_override("scratch_dir", group="apps")
    assert done["status"] == B.CANCELLED, done
    assert done["image_id"] is None and done["stack_id"] is None
    assert not any(
        image["properties"].get("heat_lite_build") == build["id"]
        for image in STORE.images.values()
    )
    assert os.listdir(root) == []  # the scratch directory removed

    def gone():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    polling.until(gone, 10, "the command killed")
