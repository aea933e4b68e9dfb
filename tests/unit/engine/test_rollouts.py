"""Rollouts in one engine process (SQLite file, fake:// transport): the
canary, batches, max_failures, busy and deleted stacks, pause / resume /
cancel / rollback, and a takeover after the owner lost the rollout."""

import contextlib
import threading
import time
import uuid

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from harness import polling
from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import api as db_api
from heat_lite.db import (
    image_holds,
    image_needs,
    managed_images,
    verifications,
)
from heat_lite.db import models as db_models
from heat_lite.db import records as db_records
from heat_lite.db import rollouts as db_rollouts
from heat_lite.db import session as db_session
from heat_lite.engine.endpoint import service
from heat_lite.engine.fleet.rollout import endpoint as fleet_endpoint
from heat_lite.engine.fleet.rollout import run as fleet_run

CONF = conf.CONF
TR = "OS::Heat::TestResource"
OLD, NEW = "5.4.45", "5.4.46"


def app_template():
    """An application: ``app`` (replaced on upgrade when ``replace``)
    whose ``healthy`` output is "yes" unless the stack's ``broken_on``
    version is the one it runs."""
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {
            "php_version": {"type": "string", "default": OLD},
            "broken_on": {"type": "string", "default": "none"},
            "replace": {"type": "boolean", "default": False},
        },
        "conditions": {
            "broken": {
                "equals": [
                    {"get_param": "php_version"},
                    {"get_param": "broken_on"},
                ]
            }
        },
        "resources": {
            "app": {
                "type": TR,
                "properties": {
                    "value": {"get_param": "php_version"},
                    "update_replace": {"get_param": "replace"},
                },
            },
            "db": {"type": TR, "properties": {"value": "static"}},
        },
        "outputs": {
            "healthy": {"value": {"if": ["broken", "no", "yes"]}},
            "version": {"value": {"get_attr": ["app", "output"]}},
        },
    }


VERIFY = {
    "timeout": 2,
    "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
}

# A gate that only the test's verdict ends: its timeout is never what
# ends it, however slow a loaded machine makes the steps before the
# verdict (a 30 s timeout expired under load and failed the batch).
SIGNALLED = dict(VERIFY, checks=[{"type": "signal"}], timeout=3600)


@contextlib.contextmanager
def _raises(cls, match=None):
    """The endpoint's typed error (wrapped as RPC-expected)."""
    with pytest.raises(messaging.ExpectedException) as info:
        yield
    error = info.value.exc_info[1]
    assert isinstance(error, cls), error
    if match is not None:
        assert match in str(error), error


def _wait(predicate, timeout=60, what="condition"):
    return polling.until(predicate, timeout, what, interval=0.05)


def _passed(keeper):
    """One keeper pass (``take_over``); always true (for a waiter)."""
    keeper.take_over()
    return True


def _stack_status(stack_id):
    stack = db_api.stack_get(stack_id)
    return "%s_%s" % (stack["action"], stack["status"])


def _apps(engine, ctxt, specs):
    """Create one application stack per (name, broken_on, replace)."""
    svc = service.EngineService(engine.ops, engine.services)
    ids = {}
    for name, broken_on, replace in specs:
        ident = svc.create_stack(
            ctxt,
            name,
            app_template(),
            {"broken_on": broken_on, "replace": replace},
            {},
            None,
            None,
            {},
        )
        ids[name] = ident["stack_id"]
    for stack_id in ids.values():
        _wait(lambda s=stack_id: _stack_status(s) == "CREATE_COMPLETE")
    return ids


def _physical(stack_id):
    return {
        r["name"]: r["physical_resource_id"]
        for r in db_records.resource_get_all(stack_id)
    }


def _version(stack_id):
    raw = db_api.raw_template_get(
        db_api.stack_get(stack_id)["raw_template_id"]
    )
    return raw["environment"]["parameters"].get("php_version", OLD)


def _body(strategy, name="php", selector=None):
    return {
        "name": name,
        "selector": selector or {"stack_name": "app-*"},
        "update": {"parameters": {"php_version": NEW}},
        "verify": VERIFY,
        "strategy": strategy,
    }


def _finished(endpoint, ctxt, rollout_id, timeout=90, keeper=None):
    """The rollout once it is over; with ``keeper``, making the keeper's
    passes the fixture turns off (a rolled back finished rollout is
    resumed by a pass: the one the rollback makes finds the flow that
    finished it still ending, or a stale lease, on a loaded machine)."""
    return _wait(
        lambda: (
            lambda r: (
                r if r["status"] not in ("IN_PROGRESS", "PAUSED") else None
            )
        )(
            (keeper is None or _passed(keeper))
            and endpoint.show_rollout(ctxt, rollout_id)
        ),
        timeout,
        "rollout finished",
    )


def _endpoint(engine):
    return fleet_endpoint.RolloutEndpoint(engine.rollouts)


def test_canary_batches_and_failures(engine, project):
    specs = [
        ("app-%02d" % i, NEW if i in (3, 6) else "none", i % 2 == 0)
        for i in range(8)
    ]
    ids = _apps(engine, project, specs)
    before = {n: _physical(s) for n, s in ids.items()}
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(
        project, _body({"canary": 1, "batch_size": 3, "max_failures": 2})
    )
    assert [t["batch"] for t in rollout["targets"]] == [0, 1, 1, 1, 2, 2, 2, 3]
    done = _finished(endpoint, project, rollout["id"])
    assert done["status"] == "COMPLETE", done["status_reason"]
    assert done["counts"]["SUCCEEDED"] == 6
    assert done["counts"]["ROLLED_BACK"] == 2
    by_name = {t["stack_name"]: t for t in done["targets"]}
    for name, stack_id in ids.items():
        if name in ("app-03", "app-06"):
            assert by_name[name]["status"] == "ROLLED_BACK"
            assert _stack_status(stack_id) == "ROLLBACK_COMPLETE"
            assert _physical(stack_id) == before[name]
            assert "healthy" in by_name[name]["status_reason"]
        else:
            assert by_name[name]["status"] == "SUCCEEDED"
            assert _stack_status(stack_id) == "UPDATE_COMPLETE"
            assert _version(stack_id) == NEW
        # One update each, never two.
        rows = verifications.verifications_of_stack(stack_id)
        assert len(rows) == 1
    assert endpoint.list_rollouts(project)[0]["id"] == rollout["id"]
    endpoint.delete_rollout(project, rollout["id"])
    with _raises(exception.RolloutNotFound):
        endpoint.show_rollout(project, rollout["id"])


def test_max_failures_stops_and_skips_the_rest(engine, project):
    specs = [("app-%d" % i, NEW if i < 2 else "none", False) for i in range(6)]
    _apps(engine, project, specs)
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(
        project, _body({"batch_size": 2, "max_failures": 1})
    )
    done = _finished(endpoint, project, rollout["id"])
    assert done["status"] == "FAILED"
    assert "2 targets failed (max_failures 1)" in done["status_reason"]
    assert done["counts"]["ROLLED_BACK"] == 2
    assert done["counts"]["SKIPPED"] == 4
    with _raises(exception.RolloutStateConflict):
        endpoint.rollout_action(project, rollout["id"], "pause")


def test_a_failed_canary_stops_the_rollout(engine, project):
    specs = [
        ("app-%d" % i, NEW if i == 0 else "none", False) for i in range(3)
    ]
    _apps(engine, project, specs)
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(
        project, _body({"canary": 1, "batch_size": 5, "max_failures": 10})
    )
    done = _finished(endpoint, project, rollout["id"])
    assert done["status"] == "FAILED"
    assert done["status_reason"].startswith("canary failed: stack app-0")
    assert [t["status"] for t in done["targets"]] == [
        "ROLLED_BACK",
        "SKIPPED",
        "SKIPPED",
    ]


def test_busy_and_deleted_stacks_are_skipped(engine, project, hold):
    ids = _apps(
        engine,
        project,
        [
            ("app-a", "none", False),
            ("app-b", "none", False),
            ("app-c", "none", False),
        ],
    )
    svc = service.EngineService(engine.ops, engine.services)
    # app-b is busy with someone else's update (held until the end).
    slow = app_template()
    slow["resources"]["app"]["properties"] = {"value": "busy", "hold": "b"}
    with hold("b"):
        svc.update_stack(
            project,
            {"stack_id": ids["app-b"]},
            slow,
            {},
            {},
            None,
            None,
            {},
        )
        svc.delete_stack(project, {"stack_id": ids["app-c"]})
        _wait(lambda: _stack_status(ids["app-c"]) == "DELETE_COMPLETE")
        endpoint = _endpoint(engine)
        body = _body({"batch_size": 3})
        body["selector"] = {"stack_name": "app-*"}
        rollout = endpoint.create_rollout(project, body)
        done = _finished(endpoint, project, rollout["id"])
        status = {t["stack_name"]: t["status"] for t in done["targets"]}
        assert status == {"app-a": "SUCCEEDED", "app-b": "SKIPPED"}
        reason = done["targets"][1]["status_reason"]
        assert "UPDATE_IN_PROGRESS" in reason and "did not start" in reason
        # The other update was not superseded.
        assert _stack_status(ids["app-b"]) == "UPDATE_IN_PROGRESS"
        svc.stack_cancel_update(project, {"stack_id": ids["app-b"]})
    _wait(lambda: _stack_status(ids["app-b"]) == "ROLLBACK_COMPLETE")


def test_validation_and_empty_selector(engine, project):
    endpoint = _endpoint(engine)
    with _raises(exception.InvalidRollout, match="matches no stack"):
        endpoint.create_rollout(project, _body({}))
    bad = [
        {"batch_size": 0},
        {"canary": -1},
        {"max_failures": "2"},
        {"bogus": 1},
    ]
    for strategy in bad:
        with _raises(exception.InvalidRollout):
            endpoint.create_rollout(project, _body(strategy))
    with _raises(exception.InvalidRollout):
        endpoint.rollout_action(project, str(uuid.uuid4()), "explode")
    with _raises(exception.RolloutNotFound):
        endpoint.rollout_action(project, str(uuid.uuid4()), "pause")


def test_pause_resume_cancel(engine, project):
    _apps(engine, project, [("app-%d" % i, "none", False) for i in range(4)])
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(project, _body({"batch_size": 1}))
    rid = rollout["id"]
    paused = endpoint.rollout_action(project, rid, "pause")
    assert paused["status"] == "PAUSED"
    with _raises(exception.RolloutStateConflict):
        endpoint.rollout_action(project, rid, "pause")
    with _raises(exception.RolloutStateConflict):
        endpoint.delete_rollout(project, rid)
    # While paused, at most the batch in flight finishes.
    polling.stays(
        lambda: (
            endpoint.show_rollout(project, rid)["counts"]["SUCCEEDED"] <= 1
        ),
        2.5,
        "at most the batch in flight finished while paused",
    )
    shown = endpoint.show_rollout(project, rid)
    assert shown["counts"]["SUCCEEDED"] <= 1
    assert shown["counts"]["PENDING"] >= 3
    endpoint.rollout_action(project, rid, "resume")
    with _raises(exception.RolloutStateConflict):
        endpoint.rollout_action(project, rid, "resume")
    endpoint.rollout_action(project, rid, "cancel")
    done = _finished(endpoint, project, rid)
    assert done["status"] == "CANCELLED"
    assert done["counts"]["SKIPPED"] >= 1
    assert done["counts"]["SUCCEEDED"] + done["counts"]["SKIPPED"] == 4
    with _raises(exception.RolloutStateConflict):
        endpoint.rollout_action(project, rid, "cancel")


def test_rollback_of_a_finished_rollout(engine, project):
    ids = _apps(
        engine,
        project,
        [
            ("app-0", "none", True),
            ("app-1", NEW, False),
            ("app-2", "none", False),
        ],
    )
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(
        project, _body({"batch_size": 3, "max_failures": 1})
    )
    done = _finished(endpoint, project, rollout["id"])
    assert done["status"] == "COMPLETE"
    assert _version(ids["app-0"]) == NEW
    endpoint.rollout_action(project, rollout["id"], "rollback")
    back = _finished(endpoint, project, rollout["id"], keeper=engine.rollouts)
    assert back["status"] == "CANCELLED", back["status_reason"]
    status = {t["stack_name"]: t["status"] for t in back["targets"]}
    assert status == {
        "app-0": "ROLLED_BACK",
        "app-1": "ROLLED_BACK",
        "app-2": "ROLLED_BACK",
    }
    for stack_id in ids.values():
        assert _version(stack_id) == OLD
    assert _stack_status(ids["app-0"]) == "UPDATE_COMPLETE"
    with _raises(exception.RolloutStateConflict):
        endpoint.rollout_action(project, rollout["id"], "rollback")


def test_rollback_of_a_rollout_finished_by_a_per_target_flow(engine, project):
    """A rollout finished before batches were tasks (its flow saved one
    task per target, no batch task) is rolled back after the upgrade: its
    batches ran, so their reverts must run and the targets go back
    (taskflow reverts a task that has no saved state yet: its gate's
    result is all the revert needs)."""
    ids = _apps(
        engine, project, [("legacy-%d" % i, "none", False) for i in range(2)]
    )
    endpoint = _endpoint(engine)
    rollout = endpoint.create_rollout(
        project,
        _body({"batch_size": 2}, "legacy", {"stack_name": "legacy-*"}),
    )
    done = _finished(endpoint, project, rollout["id"])
    assert done["status"] == "COMPLETE", done["status_reason"]
    # What the per-target flow left: gates and finish, no batch tasks.
    (_, _, atomdetails) = db_models.taskflow_tables()
    with db_session.get_engine().begin() as conn:
        gone = conn.execute(
            atomdetails.delete().where(
                atomdetails.c.parent_uuid == rollout["id"],
                atomdetails.c.name.like("batch-%"),
            )
        ).rowcount
    assert gone == 1
    endpoint.rollout_action(project, rollout["id"], "rollback")
    back = _finished(endpoint, project, rollout["id"], keeper=engine.rollouts)
    assert back["status"] == "CANCELLED", back["status_reason"]
    assert {t["status"] for t in back["targets"]} == {"ROLLED_BACK"}
    for stack_id in ids.values():
        assert _version(stack_id) == OLD


def test_another_engine_life_resumes_without_updating_twice(engine, project):
    """The owner loses the rollout mid-batch (claimed as dead): its flow
    stops at its next step, and the keeper's claim resumes the flow from
    the database, following the updates already started."""
    ids = _apps(
        engine, project, [("app-%d" % i, "none", False) for i in range(4)]
    )
    endpoint = _endpoint(engine)
    slow = SIGNALLED
    body = dict(_body({"batch_size": 2}), verify=slow)
    rollout = endpoint.create_rollout(project, body)
    rid = rollout["id"]

    def verifying():
        shown = endpoint.show_rollout(project, rid)
        return shown["counts"]["VERIFYING"] == 2

    _wait(verifying, what="first batch verifying")
    # Another (dead) life owns it now: our flow must stop.
    first = engine.rollouts.thread(rid)
    assert first is not None and first.is_alive()
    db_rollouts.rollout_claim(rid, engine.fence.owner, ("gone", 1))
    # Its thread ends (the keeper may start the next run at once).
    _wait(lambda: not first.is_alive(), what="flow stopped")
    # The keeper claims it back (its own pass, or this one).
    # A pass does nothing while the lease looks stale (a loaded machine
    # delays heartbeats): pass again until it resumed the flow.
    _wait(
        lambda: (
            _passed(engine.rollouts)
            and engine.rollouts.running(rid)
            and engine.rollouts.thread(rid) is not first
            and db_rollouts.rollout_owned(rid, engine.fence.owner)
        ),
        what="rollout resumed",
    )
    for name in sorted(ids):
        stack_id = ids[name]
        _wait(lambda s=stack_id: _verifying(s), what="%s verifying" % name)
        engine.ops.verifier.signal(db_api.stack_get(stack_id), "PASS", "ok")
    done = _finished(endpoint, project, rid)
    assert done["status"] == "COMPLETE", done["status_reason"]
    assert done["counts"]["SUCCEEDED"] == 4
    for stack_id in ids.values():
        assert len(verifications.verifications_of_stack(stack_id)) == 1


def test_a_target_superseded_before_it_passed_failed(engine, project):
    """Someone else's update during a target's verification: the target
    is FAILED (its upgrade is not known good) and counts as a failure;
    the other target, verified, SUCCEEDED."""
    ids = _apps(
        engine, project, [("app-s%d" % i, "none", False) for i in range(2)]
    )
    endpoint = _endpoint(engine)
    slow = SIGNALLED
    body = _body(
        {"batch_size": 2, "max_failures": 1},
        selector={"stack_name": "app-s*"},
    )
    rid = endpoint.create_rollout(project, dict(body, verify=slow))["id"]
    for stack_id in ids.values():
        _wait(lambda s=stack_id: _verifying(s), what="verifying")
    engine.ops.verifier.signal(db_api.stack_get(ids["app-s0"]), "PASS", "ok")
    svc = service.EngineService(engine.ops, engine.services)
    svc.update_stack(
        project,
        {"stack_id": ids["app-s1"]},
        None,
        {"php_version": "5.4.99"},
        None,
        None,
        None,
        {},
        existing=True,
    )
    done = _finished(endpoint, project, rid)
    by_name = {t["stack_name"]: t for t in done["targets"]}
    assert by_name["app-s0"]["status"] == "SUCCEEDED"
    assert by_name["app-s1"]["status"] == "FAILED"
    assert (
        "superseded by another operation"
        in (by_name["app-s1"]["status_reason"])
    )
    assert done["status"] == "COMPLETE", done["status_reason"]


def _verifying(stack_id):
    stack = db_api.stack_get(stack_id)
    row = verifications.verification_get(stack["current_traversal"])
    return row is not None and row["started_at"] is not None


def test_summary_is_in_state_order():
    assert fleet_run.summary({"SKIPPED": 2, "SUCCEEDED": 3}) == (
        "3 SUCCEEDED, 2 SKIPPED"
    )


def test_a_rollout_runs_in_one_flow_however_often_it_is_launched(
    engine, project
):
    """The keeper's pass can see a new rollout (owned by this engine, not
    yet running) while the call that created it starts it: that made two
    flows of one rollout (a duplicate logbook, targets updated twice)."""
    ids = _apps(
        engine, project, [("one-%d" % i, "none", False) for i in range(2)]
    )
    endpoint = _endpoint(engine)
    slow = SIGNALLED
    rollout = endpoint.create_rollout(
        project,
        dict(
            _body({"batch_size": 2}, "one", {"stack_name": "one-*"}),
            verify=slow,
        ),
    )
    rid = rollout["id"]
    assert engine.rollouts.launch(rid) is None  # already running
    # (Only about this rollout: one an earlier test left is not ours.)
    assert rid not in engine.rollouts.take_over()
    svc = service.EngineService(engine.ops, engine.services)
    for stack_id in ids.values():
        _wait(lambda s=stack_id: _verifying(s), what="verifying")
        svc.stack_verdict(project, {"stack_id": stack_id}, "PASS")
    done = _finished(endpoint, project, rid)
    assert done["status"] == "COMPLETE", done["status_reason"]
    assert done["counts"]["SUCCEEDED"] == sum(done["counts"].values()) == 2
    for stack_id in ids.values():
        assert len(verifications.verifications_of_stack(stack_id)) == 1


def _flow_statements(run):
    """The SQL statements on taskflow's tables made for the rollout that
    ``run()`` runs (and returns the id of), not for the rollouts of
    earlier tests that are still ending in the module's engine."""
    seen = []

    def count(conn, cursor, statement, *args):
        if any(t in statement for t in ("atomdetails", "flowdetails")):
            seen.append(threading.current_thread().name)

    engine = db_session.get_engine()
    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        rid = run()
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    # The flow runs in the rollout's own thread (and its batch's pool).
    return sum(1 for name in seen if rid[:8] in name)


def test_taskflow_writes_per_batch_not_per_target(engine, project):
    """taskflow saves every state change of an atom (a read, a write and
    a commit each): a batch is one task, whatever its width, and its
    targets' progress is in their rows."""
    _apps(engine, project, [("w1-0", "none", False)])
    _apps(engine, project, [("w3-%d" % i, "none", False) for i in range(3)])
    endpoint = _endpoint(engine)

    def rollout(prefix, width):
        body = _body({"batch_size": width}, prefix, {"stack_name": prefix})
        rid = endpoint.create_rollout(project, body)["id"]
        done = _finished(endpoint, project, rid)
        assert done["counts"]["SUCCEEDED"] == width, done["status_reason"]
        return rid

    ids = {}

    def counted(prefix, width):
        ids[width] = rollout(prefix, width)
        return ids[width]

    one = _flow_statements(lambda: counted("w1-*", 1))
    three = _flow_statements(lambda: counted("w3-*", 3))
    # The flow's atoms do not grow with the batch's width: a gate, the
    # batch, the finish.
    assert _atoms(ids[1]) == _atoms(ids[3]) == ["batch-0", "finish", "gate-0"]
    # Nor do its statements, within what timing adds (30 against 24 once
    # seen under load, cause not found: a repeated save is suspected); a
    # task per target made twice as many for three targets (48 vs 24).
    assert one > 0
    assert three < 1.5 * one


def _atoms(rollout_id):
    """The names of the atoms taskflow saved for a rollout's flow."""
    atomdetails = db_models.taskflow_tables()[2]
    with db_session.get_engine().connect() as conn:
        return sorted(
            conn.execute(
                sa.select(atomdetails.c.name).where(
                    atomdetails.c.parent_uuid == rollout_id
                )
            ).scalars()
        )


def test_a_batch_shares_one_look_and_reads_outcomes_on_changes(
    engine, project
):
    """While a batch's updates wait for their verdicts, the rollout reads
    all their stacks in one query per look, and what became of an update
    only when its stack changed (not at every look)."""
    ids = _apps(
        engine, project, [("look-%d" % i, "none", False) for i in range(3)]
    )
    endpoint = _endpoint(engine)
    slow = SIGNALLED
    body = _body({"batch_size": 3}, "look", {"stack_name": "look-*"})
    rid = endpoint.create_rollout(project, dict(body, verify=slow))["id"]

    def verifying():
        return endpoint.show_rollout(project, rid)["counts"]["VERIFYING"] == 3

    _wait(verifying, what="the batch verifying")
    prefix = "heat-lite-rollout-%s" % rid[:8]
    looks, outcomes = [], []

    def count(conn, cursor, statement, parameters, *args):
        if not threading.current_thread().name.startswith(prefix):
            return
        if "FROM stack" in statement and set(ids.values()) & set(parameters):
            looks.append(set(parameters))
        elif "FROM verification" in statement:
            outcomes.append(statement)

    db = db_session.get_engine()
    sa.event.listen(db, "before_cursor_execute", count)
    try:
        time.sleep(1.0)  # 10 polls of the fixture's driver
    finally:
        sa.event.remove(db, "before_cursor_execute", count)
    assert 3 <= len(looks) <= 15, len(looks)
    assert all(set(ids.values()) <= look for look in looks)
    assert outcomes == []
    svc = service.EngineService(engine.ops, engine.services)
    for stack_id in ids.values():
        svc.stack_verdict(project, {"stack_id": stack_id}, "PASS")
    done = _finished(endpoint, project, rid)
    assert done["counts"]["SUCCEEDED"] == 3, done["status_reason"]


def _image_named_by_each_app(project, ids):
    """An image heat_lite built, named by the ``app`` record of each
    stack (as a server's ``image`` would be)."""
    image_id = str(uuid.uuid4())
    build = str(uuid.uuid4())
    managed_images.image_add(
        {"id": image_id, "tenant": project.project_id, "build_id": build}
    )
    image_holds.release("build", build)
    for stack_id in ids.values():
        (record,) = [
            r
            for r in db_records.resource_get_all(stack_id)
            if r["name"] == "app"
        ]
        image_holds.use(project.project_id, [image_id], record_id=record["id"])
    return image_id


def _holders(image_id, kind):
    why = image_needs.needed([image_id], lambda app: 0)[image_id]
    return [r["holder"] for r in why if r["kind"] == kind]


def test_a_rollout_holds_the_images_it_can_roll_back_to(engine, project):
    """Each target's images before its update are held by the rollout
    for as long as a rollback can bring them back: after it finished,
    until it is rolled back (or deleted)."""
    ids = _apps(engine, project, [("app-0", "none", False)])
    image_id = _image_named_by_each_app(project, ids)
    endpoint = _endpoint(engine)
    first = endpoint.create_rollout(project, _body({"batch_size": 1}))
    assert _finished(endpoint, project, first["id"])["status"] == "COMPLETE"
    assert _holders(image_id, "rollout") == [first["id"]]
    endpoint.rollout_action(project, first["id"], "rollback")
    back = _finished(endpoint, project, first["id"], keeper=engine.rollouts)
    assert back["status"] == "CANCELLED", back["status_reason"]
    assert _holders(image_id, "rollout") == []

    second = endpoint.create_rollout(
        project, _body({"batch_size": 1}, name="again")
    )
    assert _finished(endpoint, project, second["id"])["status"] == "COMPLETE"
    assert _holders(image_id, "rollout") == [second["id"]]
    endpoint.delete_rollout(project, second["id"])
    assert _holders(image_id, "rollout") == []
    # What still names it: the app records (the rollout changed values
    # in place), never the rollouts.
    assert {
        r["kind"]
        for r in image_needs.needed([image_id], lambda a: 0)[image_id]
    } == {"record"}
