"""WaitConditionHandle and WaitCondition without an engine.

Signals go through the handle's ``signal_entry`` into a map kept beside
it (what the engine keeps in ``resource_signal`` rows, ``db.signals``),
and the wait condition reads the handle's data with those signals
through its services' ``resource_data`` the way the engine provides it,
so the whole exchange runs here with real plugin objects.
"""

import json

import pytest

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.resources import base, services
from heat_lite.resources import wait_condition as wc
from heat_lite.resources import wait_condition_handle as wch

CONF = conf.CONF
STACK = {
    "name": "my-stack",
    "id": "5678",
    "tenant": "demo",
    "record_uuid": "0123456789abcdef",
}


@pytest.fixture
def server_url():
    CONF.set_override(
        "heat_waitcondition_server_url", "http://heat.example.com:8004/"
    )
    yield
    CONF.clear_override("heat_waitcondition_server_url")


def _handle(transport="TOKEN_SIGNAL", name="wait-handle"):
    props = wch.WaitConditionHandle.validate_properties(
        {"signal_transport": transport}, "resources.h.properties"
    )
    handle = wch.WaitConditionHandle(
        name, "OS::Heat::WaitConditionHandle", props, stack=dict(STACK)
    )
    handle.handle_create()
    handle.kept = {}
    return handle


def _signal(handle, details):
    """What the engine does with a signal: the entry the handle makes of
    it, stored under its id (a known id in place); the event's reason."""
    key, entry, reason = handle.signal_entry(details, len(handle.kept))
    handle.kept[key] = entry
    return reason


def _data(handle):
    """The handle's data as the services' ``resource_data`` gives it."""
    return dict(handle.data(), signals=dict(handle.kept))


def _condition(handle, count=1, timeout=60):
    props = wc.WaitCondition.validate_properties(
        {
            "handle": handle.get_reference_id(),
            "count": count,
            "timeout": timeout,
        },
        "resources.w.properties",
    )
    cond = wc.WaitCondition(
        "w", "OS::Heat::WaitCondition", props, stack=dict(STACK)
    )
    store = {handle.name: handle}
    _looks_up(cond, lambda name: _data(store[name]) if name in store else None)
    return cond


def _looks_up(cond, lookup):
    """Bind ``cond`` to an action whose resource data ``lookup`` gives,
    as the engine's services do (None: outside an action)."""
    if lookup is None:
        cond.services = services.UNAVAILABLE
        return
    cond.services = services.Services(
        resource_data=lambda stack_id, name: lookup(name)
    ).for_action(STACK["id"])


def test_token_handle_attributes(server_url):
    handle = _handle()
    endpoint = (
        "http://heat.example.com:8004/v1/demo/stacks/my-stack/5678"
        "/resources/wait-handle/signal"
    )
    assert handle.resource_id == "my-stack-wait-handle-0123456789ab"
    assert handle.get_attribute("endpoint") == endpoint
    token = handle.get_attribute("token")
    assert len(token) >= 40
    assert handle.get_attribute("curl_cli") == (
        "curl -i -X POST -H 'X-Auth-Token: %s' -H 'Content-Type: "
        "application/json' -H 'Accept: application/json' %s"
        % (token, endpoint)
    )
    assert json.loads(handle.get_attribute("signal")) == {
        "endpoint": endpoint,
        "token": token,
    }
    assert _handle().get_attribute("token") != token


def test_endpoint_defaults_to_the_api_bind_address():
    CONF.set_override("bind_host", "127.0.0.2", group="api")
    CONF.set_override("bind_port", 9999, group="api")
    try:
        assert (
            _handle()
            .get_attribute("endpoint")
            .startswith("http://127.0.0.2:9999/v1/demo/stacks/my-stack/5678/")
        )
    finally:
        CONF.clear_override("bind_host", group="api")
        CONF.clear_override("bind_port", group="api")


def test_other_transports(server_url):
    heat = _handle("HEAT_SIGNAL")
    assert heat.get_attribute("token") is None
    assert heat.get_attribute("curl_cli") is None
    assert json.loads(heat.get_attribute("signal")) == {
        "endpoint": "http://heat.example.com:8004/v1/demo/stacks/my-stack/"
        "5678/resources/wait-handle/signal",
        "project_id": "demo",
        "stack_id": "5678",
        "resource_name": "wait-handle",
    }
    none = _handle("NO_SIGNAL")
    assert none.get_attribute("signal") == "{}"
    assert none.get_attribute("endpoint") is None
    with pytest.raises(exception.StackValidationFailed) as err:
        _handle("CFN_SIGNAL")
    assert "CFN_SIGNAL is not supported" in str(err.value)


def test_signals_get_heat_defaults_and_ids():
    handle = _handle()
    assert (
        _signal(handle, None)
        == "Signal: status:SUCCESS reason:Signal 1 received"
    )
    _signal(handle, {"data": {"ip": "10.0.0.1"}, "id": "web"})
    _signal(handle, {"status": "FAILURE", "reason": "disk full"})
    _signal(handle, {"id": "web", "data": "again"})
    assert handle.kept == {
        "1": {
            "status": "SUCCESS",
            "reason": "Signal 1 received",
            "data": None,
        },
        "web": {
            "status": "SUCCESS",
            "reason": "Signal 4 received",
            "data": "again",
        },
        "3": {"status": "FAILURE", "reason": "disk full", "data": None},
    }
    # The handle's own data keeps no signal: the engine stores each one.
    assert handle.data()["signals"] == {}


@pytest.mark.parametrize(
    "details",
    [
        {"status": "success"},
        {"status": "DONE"},
        {"colour": "red"},
        "text",
        [1, 2],
    ],
)
def test_malformed_signals_are_refused(details):
    handle = _handle()
    with pytest.raises(exception.Invalid) as err:
        _signal(handle, details)
    assert str(err.value) == "Metadata format invalid"
    assert handle.kept == {}


def test_signal_ids_are_at_most_255_characters():
    handle = _handle()
    _signal(handle, {"id": "x" * 255})
    with pytest.raises(exception.Invalid) as err:
        _signal(handle, {"id": "x" * 256})
    assert str(err.value) == "Signal id longer than 255 characters"


def test_a_count_beyond_what_a_handle_keeps_is_refused():
    CONF.set_override("max_signals_per_handle", 5)
    try:
        with pytest.raises(exception.StackValidationFailed) as err:
            _condition(_handle(), count=6)
        _condition(_handle(), count=5)
    finally:
        CONF.clear_override("max_signals_per_handle")
    assert str(err.value) == (
        "resources.w.properties.count: 6 is more than the 5 signals a "
        "handle keeps (max_signals_per_handle)"
    )


def test_an_adopted_handle_drops_the_signals_older_data_held():
    handle = _handle()
    handle._data["signals"] = {"1": {"status": "SUCCESS"}}
    handle.handle_adopt({"resource_id": handle.resource_id})
    assert handle.data()["signals"] == {}


def test_evaluate():
    ok = {"status": "SUCCESS", "reason": "fine", "data": 1}
    bad = {"status": "FAILURE", "reason": "broken", "data": None}
    assert wc.evaluate({}, 1, 0, 10) is False
    assert wc.evaluate({"1": ok}, 2, 0, 10) is False
    assert wc.evaluate({"1": ok, "2": ok}, 2, 0, 10) is True
    with pytest.raises(wc.WaitConditionFailure) as err:
        wc.evaluate({"1": bad, "2": ok, "3": dict(bad, reason="x")}, 5, 0, 10)
    assert str(err.value) == "broken;x"
    with pytest.raises(wc.WaitConditionTimeout) as err:
        wc.evaluate({}, 2, 11, 10)
    assert str(err.value) == "0 of 2 received"
    with pytest.raises(wc.WaitConditionTimeout) as err:
        wc.evaluate({"1": ok, "2": dict(ok, reason="b"), "3": bad}, 3, 11, 10)
    assert str(err.value) == "2 of 3 received - fine;b"


def test_handle_reference_to_name():
    assert wc.handle_candidates("st-my-handle-0123456789ab", "st") == [
        "my-handle",
        "st-my-handle-0123456789ab",
    ]
    assert wc.handle_candidates("my-handle", "st") == ["my-handle"]


def test_wait_polls_until_enough_signals_then_exposes_data():
    handle = _handle()
    cond = _condition(handle, count=2)
    cookie = cond.handle_create()
    assert cond.resource_id is None
    with pytest.raises(base.PollDelay) as delay:
        cond.check_create_complete(cookie)
    assert 0 < delay.value.seconds <= wc.MAX_POLL
    _signal(handle, {"data": "first"})
    with pytest.raises(base.PollDelay):
        cond.check_create_complete(cookie)
    _signal(handle, {"id": "b", "data": {"k": 2}})
    assert cond.check_create_complete(cookie) is True
    assert json.loads(cond.get_attribute("data")) == {
        "1": "first",
        "b": {"k": 2},
    }
    _looks_up(cond, None)  # as the API resolves it
    assert json.loads(cond.get_attribute("data")) == {
        "1": "first",
        "b": {"k": 2},
    }


def test_failure_signal_fails_the_wait():
    handle = _handle()
    cond = _condition(handle, count=3)
    cookie = cond.handle_create()
    _signal(handle, {"status": "FAILURE", "reason": "no disk"})
    _signal(handle, {"status": "FAILURE", "reason": "no net"})
    with pytest.raises(wc.WaitConditionFailure) as err:
        cond.check_create_complete(cookie)
    assert str(err.value) == "no disk;no net"


def test_timeout_fails_the_wait_and_polls_stop_at_the_deadline():
    handle = _handle()
    cond = _condition(handle, count=2, timeout=1)
    cookie = cond.handle_create()
    _signal(handle, {"reason": "one"})
    cookie["started"] -= 0.9
    cookie["delay"] = wc.MAX_POLL
    with pytest.raises(base.PollDelay) as delay:
        cond.check_create_complete(cookie)
    assert delay.value.seconds < 0.2
    cookie["started"] -= 0.2
    with pytest.raises(wc.WaitConditionTimeout) as err:
        cond.check_create_complete(cookie)
    assert str(err.value) == "1 of 2 received - one"


def test_update_waits_again_for_the_new_count():
    handle = _handle()
    cond = _condition(handle, count=1)
    _signal(handle, None)
    assert cond.check_create_complete(cond.handle_create())
    new = dict(cond.properties, count=3)
    assert not cond.needs_replace(new, {"count"})
    assert cond.needs_replace(dict(new, timeout=5), {"timeout"})
    cookie = cond.handle_update(new, {"count"})
    _signal(handle, None)
    with pytest.raises(base.PollDelay):
        cond.check_update_complete(cookie)
    _signal(handle, None)
    assert cond.check_update_complete(cookie) is True


def test_wrong_handles_fail_at_once():
    handle = _handle()
    cond = _condition(handle)
    cond.properties = dict(cond.properties, handle="nothing")
    with pytest.raises(wc.HandleNotFound):
        cond.handle_create()
    other = wch.WaitConditionHandle("other", "x", {}, stack=dict(STACK))
    _looks_up(cond, lambda name: {"value": 1})
    cond.properties = dict(cond.properties, handle=other.name)
    with pytest.raises(ValueError) as err:
        cond.handle_create()
    assert "other is not a valid wait condition handle" in str(err.value)


def test_lookup_needs_the_engine():
    cond = _condition(_handle())
    _looks_up(cond, None)
    with pytest.raises(RuntimeError):
        cond.handle_create()
