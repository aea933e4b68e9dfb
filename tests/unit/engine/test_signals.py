"""Signals to a WaitConditionHandle through the engine (issue 26 item 2):
each one stored on its own, bounded in size and in number, and a
multi-signal WaitCondition completing as Heat's does. The engine runs in
this process on an SQLite file."""

import json
import uuid

import oslo_messaging as messaging
import pytest

from harness import endpoints, inprocess, polling
from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import api as db_api
from heat_lite.db import records as conv

CONF = conf.CONF
CTXT = context.RequestContext(project_id="p", user_id="u")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite", tmp_path_factory.mktemp("signals")
    ) as proc:
        yield endpoints.Engine(proc.ops, proc.services)


def _waiting(engine, count, timeout=600):
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "count": count,
                    "timeout": timeout,
                },
            },
        },
        "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}}},
    }
    name = "w" + uuid.uuid4().hex[:8]
    ident = engine.create_stack(CTXT, name, tmpl, {}, {}, None, None, {})
    polling.until(
        lambda: _record(ident, "wait")["status"] == "IN_PROGRESS",
        30,
        "the wait condition waiting",
    )
    return ident


def _record(ident, name):
    records = conv.resource_get_all(ident["stack_id"])
    return next(r for r in records if r["name"] == name)


def _status(ident, name):
    record = _record(ident, name)
    return "%s_%s" % (record["action"], record["status"])


def test_a_multi_signal_wait_completes_as_heats_does(engine):
    """count 3: distinct ids count once each, a known id replaces its
    signal (Heat's WaitCondition, issue 28)."""
    ident = _waiting(engine, count=3)
    handle_data = _record(ident, "handle")["rsrc_data"]
    engine.resource_signal(CTXT, ident, "handle", {"id": "a", "data": 1})
    engine.resource_signal(CTXT, ident, "handle", {"id": "a", "data": 2})
    engine.resource_signal(CTXT, ident, "handle", {"data": "no id"})
    polling.stays(
        lambda: _status(ident, "wait") == "CREATE_IN_PROGRESS",
        1.0,
        "two distinct signals not enough for a count of 3",
    )
    engine.resource_signal(CTXT, ident, "handle", {"id": "c", "data": 3})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    stack = engine.show_stack(CTXT, ident)
    assert json.loads(stack["outputs"][0]["output_value"]) == {
        "a": 2,
        "2": "no id",
        "c": 3,
    }
    # Each signal was stored on its own: the handle's record never held
    # (nor rewrote) them; its metadata shows them, as Heat's does.
    assert _record(ident, "handle")["rsrc_data"] == handle_data
    metadata = engine.resource_metadata(CTXT, ident, "handle")
    assert list(metadata) == ["a", "2", "c"]
    assert metadata["2"] == {
        "status": "SUCCESS",
        "reason": "Signal 2 received",
        "data": "no id",
    }
    reasons = [
        e["resource_status_reason"]
        for e in engine.list_events(CTXT, ident, resource_name="handle")
        if e["resource_action"] == "SIGNAL"
    ]
    assert reasons[-1] == "Signal: status:SUCCESS reason:Signal 3 received"


def _refused(engine, ident, details, name):
    """The typed error the engine refuses a signal with (as RPC carries
    it back to the API)."""
    with pytest.raises(messaging.ExpectedException) as err:
        engine.resource_signal(CTXT, ident, "handle", details)
    error = err.value.exc_info[1]
    assert type(error).__name__ == name, error
    return error


def test_a_signal_above_max_signal_size_is_refused(engine):
    ident = _waiting(engine, count=1)
    error = _refused(
        engine, ident, {"data": "x" * CONF.max_signal_size}, "SignalTooLarge"
    )
    assert error.code == 413
    assert engine.resource_metadata(CTXT, ident, "handle") == {}
    engine.resource_signal(CTXT, ident, "handle", {"data": "x" * 100})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")


@pytest.fixture
def two_per_handle():
    CONF.set_override("max_signals_per_handle", 2)
    yield
    CONF.clear_override("max_signals_per_handle")


def test_a_handle_keeps_at_most_max_signals_per_handle(engine, two_per_handle):
    ident = _waiting(engine, count=2)
    engine.resource_signal(CTXT, ident, "handle", {"data": "first"})
    engine.resource_signal(CTXT, ident, "handle", {"id": "b"})
    error = _refused(engine, ident, {"id": "c"}, "TooManySignals")
    assert error.code == 400
    assert "handle keeps 2 signals already" in str(error)
    # A known id still replaces its signal.
    engine.resource_signal(CTXT, ident, "handle", {"id": "1", "data": "2nd"})
    metadata = engine.resource_metadata(CTXT, ident, "handle")
    assert list(metadata) == ["1", "b"]
    assert metadata["1"]["data"] == "2nd"
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")


def test_abandon_data_carries_the_signals(engine):
    CONF.set_override("enable_stack_abandon", True)
    try:
        _abandon_data_carries_the_signals(engine)
    finally:
        CONF.clear_override("enable_stack_abandon")


def _abandon_data_carries_the_signals(engine):
    ident = _waiting(engine, count=1)
    engine.resource_signal(CTXT, ident, "handle", {"id": "x", "data": [1]})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    handle = engine.export_stack(CTXT, ident)["resources"]["handle"]
    signal = {"status": "SUCCESS", "reason": "Signal 1 received", "data": [1]}
    assert handle["resource_data"]["signals"] == {"x": signal}
    assert handle["metadata"] == {"x": signal}


def test_a_deleted_stack_keeps_no_signal(engine):
    ident = _waiting(engine, count=1)
    record_id = _record(ident, "handle")["id"]
    engine.resource_signal(CTXT, ident, "handle", None)
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    engine.delete_stack(CTXT, ident)
    polling.stack_reaches(ident["stack_id"], "DELETE_COMPLETE")
    from heat_lite.db import signals as db_signals

    assert db_signals.resource_signals(record_id) == {}
    assert db_api.stack_get(ident["stack_id"])["deleted_at"] is not None
