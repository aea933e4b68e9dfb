"""Built-in resource types through the API: RandomString, Value,
WaitConditionHandle + WaitCondition (signalled through the API), and
SoftwareConfig, with Heat's properties, attributes and update behaviour."""

import json
import string
import uuid

import pytest
import requests
from heatclient import exc as heat_exc

from harness import helpers, polling


def _outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _delete(heat, stack_id):
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def _update(heat, stack_id, tmpl, expected="UPDATE_COMPLETE"):
    heat.stacks.update(stack_id, template=tmpl)
    return helpers.wait_for_status(heat, stack_id, expected)


# RandomString --------------------------------------------------------------
def _random(**props):
    return helpers.template(
        {"pw": {"type": "OS::Heat::RandomString", "properties": props}},
        outputs={
            "value": {"value": {"get_attr": ["pw", "value"]}},
            "ref": {"value": {"get_resource": "pw"}},
        },
    )


def test_random_string_value_reference_and_replacement(heat):
    props = {
        "length": 12,
        "character_classes": [{"class": "digits", "min": 4}],
        "character_sequences": [{"sequence": "!", "min": 2}],
    }
    stack_id = helpers.create(heat, "random", _random(**props))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    first = _outputs(heat, stack_id)
    value = first["value"]
    assert first["ref"] == value
    assert len(value) == 12
    assert sum(ch in string.digits for ch in value) >= 4
    assert value.count("!") >= 2
    assert set(value) <= set(string.ascii_letters + string.digits + "!")
    physical = _physical(heat, stack_id)["pw"]
    assert physical.startswith("random-pw-")

    _update(heat, stack_id, _random(**props))  # unchanged: same value
    assert _outputs(heat, stack_id)["value"] == value
    _update(heat, stack_id, _random(salt="new", **props))
    second = _outputs(heat, stack_id)["value"]
    assert second != value and len(second) == 12
    assert _physical(heat, stack_id)["pw"] != physical
    _delete(heat, stack_id)


def test_random_string_minimums_must_fit(heat):
    with pytest.raises(heat_exc.HTTPBadRequest) as err:
        helpers.create(
            heat,
            "random-bad",
            _random(
                length=2, character_classes=[{"class": "digits", "min": 3}]
            ),
        )
    assert (
        "Length property cannot be smaller than combined character "
        "class and character sequence minimums" in str(err.value)
    )


# Value ---------------------------------------------------------------------
def _values(value, value_type="number"):
    return helpers.template(
        {
            "v": {
                "type": "OS::Heat::Value",
                "properties": {"value": value, "type": value_type},
            },
            "copy": {
                "type": "OS::Heat::Value",
                "properties": {"value": {"get_attr": ["v", "value"]}},
            },
        },
        outputs={
            "v": {"value": {"get_attr": ["v", "value"]}},
            "copy": {"value": {"get_attr": ["copy", "value"]}},
        },
    )


def test_value_coerces_and_updates_in_place(heat):
    stack_id = helpers.create(heat, "values", _values("3"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert _outputs(heat, stack_id) == {"v": 3, "copy": 3}
    before = _physical(heat, stack_id)

    _update(heat, stack_id, _values({"a": [1]}, "json"))
    assert _outputs(heat, stack_id) == {"v": {"a": [1]}, "copy": {"a": [1]}}
    assert _physical(heat, stack_id) == before
    statuses = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    assert statuses == {"v": "UPDATE_COMPLETE", "copy": "UPDATE_COMPLETE"}
    _delete(heat, stack_id)


def test_value_of_the_wrong_type_is_refused(heat):
    with pytest.raises(heat_exc.HTTPBadRequest) as err:
        helpers.create(heat, "values-bad", _values("three"))
    assert "resources.v.properties.value" in str(err.value)


# WaitConditionHandle / WaitCondition ---------------------------------------
def _waiting(count=1, timeout=120):
    return helpers.template(
        {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "count": count,
                    "timeout": timeout,
                },
            },
            "after": {"type": "OS::Heat::None", "depends_on": "wait"},
        },
        outputs={
            name: {"value": {"get_attr": ["handle", name]}}
            for name in ("endpoint", "token", "curl_cli", "signal")
        }
        | {"data": {"value": {"get_attr": ["wait", "data"]}}},
    )


def _wait_for_resource(heat, stack_id, name, status, timeout=60):
    def reached():
        resource = heat.resources.get(stack_id, name)
        if resource.resource_status == status:
            return True
        if resource.resource_status.endswith("FAILED"):
            raise AssertionError(
                "%s is %s (%s), expected %s"
                % (
                    name,
                    resource.resource_status,
                    resource.resource_status_reason,
                    status,
                )
            )
        return False

    polling.until(reached, timeout, "%s %s" % (name, status))


def test_wait_condition_completes_on_signals(deployment, heat):
    stack_id = helpers.create(heat, "waiting", _waiting(count=2))
    _wait_for_resource(heat, stack_id, "handle", "CREATE_COMPLETE")
    _wait_for_resource(heat, stack_id, "wait", "CREATE_IN_PROGRESS")
    handle = heat.resources.get(stack_id, "handle")
    endpoint = "%s/stacks/waiting/%s/resources/handle/signal" % (
        deployment.endpoint(),
        stack_id,
    )

    heat.resources.signal(
        stack_id, "handle", data={"data": {"ip": "192.0.2.1"}, "id": "web"}
    )
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    # The second signal goes where the handle's attributes say, with the
    # handle's token, as a server's curl would send it.
    attrs = heat.resources.get(
        stack_id, "handle", with_attr=["endpoint", "token"]
    ).attributes
    assert attrs["endpoint"] == endpoint
    resp = requests.post(
        attrs["endpoint"],
        json={"data": "two"},
        headers={
            "X-Auth-Token": attrs["token"],
            "Content-Type": "application/json",
        },
        timeout=30,
    )
    assert resp.status_code == 200, resp.text
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    outputs = _outputs(heat, stack_id)
    assert outputs["endpoint"] == endpoint
    assert outputs["curl_cli"] == (
        "curl -i -X POST -H 'X-Auth-Token: %s' -H 'Content-Type: "
        "application/json' -H 'Accept: application/json' %s"
        % (outputs["token"], endpoint)
    )
    assert json.loads(outputs["signal"]) == {
        "endpoint": endpoint,
        "token": outputs["token"],
    }
    assert json.loads(outputs["data"]) == {
        "web": {"ip": "192.0.2.1"},
        "2": "two",
    }
    assert handle.physical_resource_id.startswith("waiting-handle-")
    metadata = heat.resources.metadata(stack_id, "handle")
    assert metadata["web"] == {
        "status": "SUCCESS",
        "data": {"ip": "192.0.2.1"},
        "reason": "Signal 1 received",
    }
    reasons = [
        e.resource_status_reason
        for e in heat.events.list(stack_id, resource_name="handle")
    ]
    assert "Signal: status:SUCCESS reason:Signal 2 received" in reasons

    # A bigger count waits again, in place; signals so far still count.
    heat.stacks.update(stack_id, template=_waiting(count=3))
    _wait_for_resource(heat, stack_id, "wait", "UPDATE_IN_PROGRESS")
    heat.resources.signal(stack_id, "handle", data={"reason": "third"})
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert len(json.loads(_outputs(heat, stack_id)["data"])) == 3
    _delete(heat, stack_id)


def test_wait_condition_fails_with_failure_reasons(heat):
    stack_id = helpers.create(heat, "waiting-fail", _waiting(count=3))
    _wait_for_resource(heat, stack_id, "wait", "CREATE_IN_PROGRESS")
    heat.resources.signal(
        stack_id, "handle", data={"status": "FAILURE", "reason": "disk full"}
    )
    with pytest.raises(AssertionError) as err:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert "CREATE_FAILED" in str(err.value)
    wait = heat.resources.get(stack_id, "wait")
    assert wait.resource_status == "CREATE_FAILED"
    assert (
        wait.resource_status_reason
        == "WaitConditionFailure: resources.wait: disk full"
    )
    assert (
        heat.resources.get(stack_id, "after").resource_status
        == "INIT_COMPLETE"
    )
    with pytest.raises(heat_exc.HTTPBadRequest) as err:
        heat.resources.signal(stack_id, "handle", data={"status": "MAYBE"})
    assert "Metadata format invalid" in str(err.value)
    _delete(heat, stack_id)


def test_wait_condition_times_out(heat):
    stack_id = helpers.create(
        heat, "waiting-late", _waiting(count=2, timeout=2)
    )
    _wait_for_resource(heat, stack_id, "wait", "CREATE_IN_PROGRESS")
    heat.resources.signal(stack_id, "handle", data={"reason": "only one"})
    with pytest.raises(AssertionError):
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    wait = heat.resources.get(stack_id, "wait")
    assert (
        wait.resource_status_reason
        == "WaitConditionTimeout: resources.wait: 1 of 2 received - only one"
    )
    _delete(heat, stack_id)


# SoftwareConfig ------------------------------------------------------------
def _config(script):
    return helpers.template(
        {
            "config": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {
                    "group": "script",
                    "config": script,
                    "inputs": [{"name": "foo", "default": "bar"}],
                    "outputs": [{"name": "result"}],
                },
            }
        },
        outputs={
            "config": {"value": {"get_attr": ["config", "config"]}},
            "id": {"value": {"get_resource": "config"}},
        },
    )


def test_software_config_is_stored_and_replaced_on_change(heat):
    stack_id = helpers.create(heat, "configs", _config("#!/bin/sh\necho 1"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    first = _outputs(heat, stack_id)
    assert first["config"] == "#!/bin/sh\necho 1"
    uuid.UUID(first["id"])
    assert _physical(heat, stack_id)["config"] == first["id"]
    stored = heat.software_configs.get(first["id"])
    assert (stored.group, stored.config) == ("script", first["config"])
    assert stored.inputs[0]["default"] == "bar"

    _update(heat, stack_id, _config("#!/bin/sh\necho 2"))
    second = _outputs(heat, stack_id)
    assert second["config"] == "#!/bin/sh\necho 2"
    assert second["id"] != first["id"]
    # The replaced config's row went with the old resource.
    assert (
        helpers.http_error(lambda: heat.software_configs.get(first["id"])).code
        == 404
    )
    assert heat.software_configs.get(second["id"]).config == second["config"]
    _delete(heat, stack_id)
    assert (
        helpers.http_error(
            lambda: heat.software_configs.get(second["id"])
        ).code
        == 404
    )


# UpdateWaitConditionHandle -------------------------------------------------
def _waiting_on_update(marker):
    return helpers.template(
        {
            "handle": {"type": "OS::Heat::UpdateWaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "timeout": 60,
                },
            },
            "marker": {
                "type": "OS::Heat::Value",
                "properties": {"value": marker},
            },
        },
        outputs={"token": {"value": {"get_attr": ["handle", "token"]}}},
    )


def test_update_wait_condition_handle_waits_again_on_every_update(heat):
    stack_id = helpers.create(heat, "rewait", _waiting_on_update("a"))
    _wait_for_resource(heat, stack_id, "wait", "CREATE_IN_PROGRESS")
    heat.resources.signal(stack_id, "handle", data={"reason": "first"})
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)
    token = _outputs(heat, stack_id)["token"]

    # Only the marker changes, yet the handle is new and the wait
    # condition waits for a new signal.
    heat.stacks.update(stack_id, template=_waiting_on_update("b"))
    _wait_for_resource(heat, stack_id, "wait", "CREATE_IN_PROGRESS")
    assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    heat.resources.signal(stack_id, "handle", data={"reason": "again"})
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    after = _physical(heat, stack_id)
    assert after["handle"] != before["handle"]
    assert after["marker"] == before["marker"]
    assert _outputs(heat, stack_id)["token"] != token
    _delete(heat, stack_id)
