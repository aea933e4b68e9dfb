"""Per-stack update semantics (``engine.traversal.queue``) and the
traversal log, on an engine in this process (SQLite file, fake://): what
a second and third update do while one runs (converge, queue, reject),
the watchdog starting a queue whose starter died, the history bound.
An update is held in its action by the TestResource's ``hold`` (no timer
to race)."""

import json
import uuid

import pytest

from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.db import traversal_log as db_log
from heat_lite.engine.endpoint import service, traversals
from tests.unit.engine.test_rollouts import _raises, _stack_status, _wait

CONF = conf.CONF


def _template(value, hold):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": value, "hold": hold},
            },
            "b": {"type": "OS::Heat::None", "depends_on": "a"},
        },
    }


@pytest.fixture
def ctxt():
    return context.RequestContext(
        project_id="s" + uuid.uuid4().hex[:8],
        user_id="u",
        user_name="alice",
        overwrite=False,
    )


def _value(stack_id):
    (record,) = [
        r for r in db_records.resource_get_all(stack_id) if r["name"] == "a"
    ]
    return json.loads(record["properties_data"])["value"]


def _reasons(stack_id):
    return [
        e["resource_status_reason"] for e in db_events.event_get_all(stack_id)
    ]


def _create(engine, ctxt, semantics, hold):
    svc = service.EngineService(engine.ops, engine.services)
    args = {"update_semantics": semantics} if semantics else {}
    ident = svc.create_stack(
        ctxt, "sem", _template("v0", hold), {}, {}, None, None, args
    )
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    return svc, ident


def _update(svc, ctxt, ident, value, hold):
    return svc.update_stack(
        ctxt, ident, _template(value, hold), {}, {}, None, None, {}
    )["traversal"]


def _log(ctxt, ident):
    """{traversal id: row} and the ids newest first."""
    rows = traversals.TraversalEndpoint().list_traversals(ctxt, ident)
    return {r["id"]: r for r in rows}, [r["id"] for r in rows]


def _settled(stack_id):
    """The stack is COMPLETE with nothing queued or running."""
    return _stack_status(stack_id).endswith("_COMPLETE") and not any(
        r["state"] in ("QUEUED", "RUNNING") for r in db_log.log_list(stack_id)
    )


def test_converge_newest_supersedes(engine, ctxt, hold):
    svc, ident = _create(engine, ctxt, None, "conv")
    stack_id = ident["stack_id"]
    with hold("conv"):
        first = _update(svc, ctxt, ident, "v1", "conv")
        assert first["state"] == "RUNNING"
        second = _update(svc, ctxt, ident, "v2", "conv")
        third = _update(svc, ctxt, ident, "v3", "conv")
    _wait(lambda: _settled(stack_id))
    assert _stack_status(stack_id) == "UPDATE_COMPLETE"
    assert _value(stack_id) == "v3"
    rows, _ = _log(ctxt, ident)
    t1, t2, t3 = first["traversal"], second["traversal"], third["traversal"]
    assert (rows[t1]["state"], rows[t1]["superseded_by"]) == ("SUPERSEDED", t2)
    assert (rows[t2]["state"], rows[t2]["superseded_by"]) == ("SUPERSEDED", t3)
    assert rows[t3]["state"] == "COMPLETE"
    assert rows[t3]["requested_by"] == "alice"
    reasons = _reasons(stack_id)
    assert any(
        "Traversal %s (UPDATE) superseded by traversal %s" % (t1, t2) in r
        for r in reasons
    ), reasons


def test_queue_runs_all_in_order(engine, ctxt, hold):
    svc, ident = _create(engine, ctxt, "queue", "q")
    stack_id = ident["stack_id"]
    with hold("q"):
        first = _update(svc, ctxt, ident, "v1", "q")
        second = _update(svc, ctxt, ident, "v2", "q")
        third = _update(svc, ctxt, ident, "v3", "q")
        assert first["state"] == "RUNNING"
        assert (second["state"], second["position"]) == ("QUEUED", 1)
        assert (third["state"], third["position"]) == ("QUEUED", 2)
        rows, order = _log(ctxt, ident)
        assert [rows[t]["state"] for t in order[:3]] == [
            "QUEUED",
            "QUEUED",
            "RUNNING",
        ]
    _wait(lambda: _settled(stack_id))
    assert _value(stack_id) == "v3"
    rows, _ = _log(ctxt, ident)
    ids = [u["traversal"] for u in (first, second, third)]
    assert [rows[t]["state"] for t in ids] == ["COMPLETE"] * 3
    for before, after in zip(ids, ids[1:], strict=False):
        assert rows[after]["started_at"] >= rows[before]["finished_at"]
    assert _reasons(stack_id).count("Stack UPDATE started") == 3


def test_reject_refuses_while_running(engine, ctxt, hold):
    svc, ident = _create(engine, ctxt, "reject", "r")
    stack_id = ident["stack_id"]
    with hold("r"):
        first = _update(svc, ctxt, ident, "v1", "r")
        for value in ("v2", "v3"):
            with _raises(exception.ActionInProgress, "in progress"):
                _update(svc, ctxt, ident, value, "r")
    _wait(lambda: _settled(stack_id))
    assert _value(stack_id) == "v1"
    rows, order = _log(ctxt, ident)
    assert order[0] == first["traversal"] and len(order) == 2


def test_queue_full_and_cancel(engine, ctxt, hold):
    CONF.set_override("max_queued_updates", 2, group="engine")
    try:
        svc, ident = _create(engine, ctxt, "queue", "f")
        stack_id = ident["stack_id"]
        ends = traversals.TraversalEndpoint()
        with hold("f"):
            _update(svc, ctxt, ident, "v1", "f")
            second = _update(svc, ctxt, ident, "v2", "f")
            _update(svc, ctxt, ident, "v3", "f")
            with _raises(exception.UpdateQueueFull):
                _update(svc, ctxt, ident, "v4", "f")
            cancelled = ends.cancel_traversal(ctxt, ident, second["traversal"])
            assert cancelled["state"] == "CANCELLED"
            with _raises(exception.TraversalNotQueued):
                ends.cancel_traversal(ctxt, ident, second["traversal"])
        _wait(lambda: _settled(stack_id))
        assert _value(stack_id) == "v3"
    finally:
        CONF.clear_override("max_queued_updates", group="engine")


def test_watchdog_starts_a_queue_whose_starter_died(engine, ctxt, hold):
    """A queued update left behind (its stack idle: the engine that
    finished the last traversal died before starting it) is started by
    the watchdog, exactly once though every pass looks."""
    svc, ident = _create(engine, ctxt, "queue", "w")
    stack_id = ident["stack_id"]
    request = {
        "template": _template("v9", "w"),
        "params": {},
        "files": {},
        "environment": None,
        "environment_files": None,
        "args": {},
        "existing": False,
        "context": ctxt.to_dict(),
    }
    left = str(uuid.uuid4())
    db_log.queue_add(stack_id, left, "alice", request, None, 5)
    _wait(lambda: _settled(stack_id) and _value(stack_id) == "v9")
    for _ in range(3):
        engine.watchdog.tick()
    rows, _ = _log(ctxt, ident)
    assert rows[left]["state"] == "COMPLETE"
    assert _reasons(stack_id).count("Stack UPDATE started") == 1


def test_history_is_bounded(engine, ctxt, hold):
    CONF.set_override("max_traversal_history", 3, group="engine")
    try:
        svc, ident = _create(engine, ctxt, None, "h")
        for value in ("v1", "v2", "v3", "v4"):
            _update(svc, ctxt, ident, value, "h")
            _wait(lambda: _settled(ident["stack_id"]))
        rows, order = _log(ctxt, ident)
        assert len(order) == 3
        assert all(r["action"] == "UPDATE" for r in rows.values())
    finally:
        CONF.clear_override("max_traversal_history", group="engine")


def test_other_project_sees_no_traversals(engine, ctxt, hold):
    _svc, ident = _create(engine, ctxt, None, "o")
    other = context.RequestContext(project_id="other", user_id="x")
    with _raises(exception.StackNotFound):
        traversals.TraversalEndpoint().list_traversals(other, ident)
