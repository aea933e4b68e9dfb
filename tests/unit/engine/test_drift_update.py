"""A drift report as the input of an update, in an in-process engine on
SQLite, PostgreSQL and MariaDB: the report is written as a detection
writes it (``db.drift``), claiming a property of an ``OS::Heat::Value``
drifted (no built-in type can drift by itself: the cloud types'
drift is tests/functional/test_cloud_drift_revert.py's). A plain update
leaves it and writes ``DRIFT KEPT``; a ``revert_drift`` update runs the
plugin's update with the template's value (its diff holds the drifted
property although the template did not change) and writes ``DRIFT
REVERTING``; a revert on a stale report is refused (409)."""

import json
import uuid

import oslo_messaging as messaging
import pytest

from harness import inprocess, polling
from heat_lite.common import context, exception
from heat_lite.db import drift as db_drift
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.db import session
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions
from heat_lite.engine.drift import inputs as drift_inputs
from heat_lite.engine.endpoint import service
from heat_lite.resources import value as value_mod
from tests.unit.engine.test_step_costs import Counter

CTXT = context.RequestContext(project_id="p", user_id="u", is_admin=True)
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "v": {"type": "OS::Heat::Value", "properties": {"value": "x"}},
        "w": {"type": "OS::Heat::Value", "properties": {"value": "w"}},
    },
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def engine(request, tmp_path_factory):
    with inprocess.engine_process(
        request.param, tmp_path_factory.mktemp("drift-update")
    ) as proc:
        yield proc


def _report(stack_id, record):
    """A report of ``v`` MODIFIED, stored as a detection stores it."""
    detection = str(uuid.uuid4())
    assert db_drift.drift_start(stack_id, "p", detection, 600)
    entry = {
        "resource_name": "v",
        "resource_type": "OS::Heat::Value",
        "physical_resource_id": record["physical_resource_id"],
        "parent_resource": None,
        "drift_status": "MODIFIED",
        "properties": [{"name": "value", "expected": "x", "actual": "z"}],
    }
    assert db_drift.drift_finish(stack_id, detection, "DRIFTED", [entry])


def _update(engine, ident, args, template=TEMPLATE):
    endpoint = service.EngineService(engine.ops, engine.services)
    endpoint.update_stack(
        CTXT,
        dict(ident, path=""),
        template,
        {},
        {},
        None,
        None,
        args,
    )
    polling.stack_reaches(ident["stack_id"], "UPDATE_COMPLETE")


def _drift_events(stack_id):
    return [
        (e["resource_name"], e["resource_status"], e["resource_status_reason"])
        for e in db_events.event_get_all(stack_id, sort_dir="asc")
        if e["resource_action"] == "DRIFT"
    ]


def _record(stack_id, name):
    (record,) = [
        r for r in db_records.resource_get_all(stack_id) if r["name"] == name
    ]
    return record


def test_plain_update_keeps_and_revert_puts_back(engine, monkeypatch):
    endpoint = service.EngineService(engine.ops, engine.services)
    name = "r" + uuid.uuid4().hex[:8]
    stack_id = endpoint.create_stack(
        CTXT, name, TEMPLATE, {}, {}, None, None, {}
    )["stack_id"]
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    ident = {"stack_id": stack_id, "stack_name": name, "tenant": "p"}
    record = _record(stack_id, "v")
    _report(stack_id, record)

    updates = []
    original = value_mod.Value.handle_update

    def spy(plugin, new_props, prop_diff):
        updates.append(
            (plugin.name, plugin.properties["value"], new_props["value"])
        )
        return original(plugin, new_props, prop_diff)

    monkeypatch.setattr(value_mod.Value, "handle_update", spy)
    changed = json.loads(json.dumps(TEMPLATE))
    changed["resources"]["w"]["properties"]["value"] = "w2"
    _update(engine, ident, {}, changed)
    assert _drift_events(stack_id) == [
        ("v", "KEPT", "Drift of value left in place")
    ]
    assert [u[0] for u in updates] == ["w"]

    # That update made the report stale: a revert is refused.
    with pytest.raises(messaging.ExpectedException) as info:
        _update(engine, ident, {"revert_drift": True}, changed)
    assert isinstance(info.value.exc_info[1], exception.DriftNotCurrent)
    _report(stack_id, record)
    updates.clear()
    _update(engine, ident, {"revert_drift": True}, changed)
    # From the live value back to the template's.
    assert updates == [("v", "z", "x")]
    assert _drift_events(stack_id)[-1] == (
        "v",
        "REVERTING",
        "Drift of value reverted",
    )
    after = _record(stack_id, "v")
    assert after["properties_before"] is None
    assert after["physical_resource_id"] == record["physical_resource_id"]


def test_what_an_update_start_reads(engine):
    """The drift inputs of an update's start (``drift.inputs``): one
    read (the report) without drift, one more (the stack's records)
    with drift; nothing written (the events and the planner's columns
    go in the start's own transaction)."""
    endpoint = service.EngineService(engine.ops, engine.services)
    name = "c" + uuid.uuid4().hex[:8]
    stack_id = endpoint.create_stack(
        CTXT, name, TEMPLATE, {}, {}, None, None, {}
    )["stack_id"]
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    stack = db_stacks.stack_get(stack_id)
    bound = definitions.get(
        stack["raw_template_id"], definitions.stack_info(stack)
    )

    def cost(reverting):
        with Counter(session.get_engine()) as counter:
            found = counter.call(
                drift_inputs.update_inputs,
                stack,
                bound,
                reverting,
                engine.services,
            )
        return counter.statements, counter.commits, found

    statements, commits, found = cost(False)
    assert (statements, commits, found.events) == (1, 0, [])
    _report(stack_id, _record(stack_id, "v"))
    statements, commits, found = cost(True)
    assert (statements, commits) == (2, 0), statements
    assert sorted(found.revert) == ["v"]
    assert [e["resource_status"] for e in found.events] == ["REVERTING"]
