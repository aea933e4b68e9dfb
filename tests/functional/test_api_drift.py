"""Drift detection through the REST API on the SQLite deployment: the
report of a stack whose types hold their own state (nested stacks and
group members included; a software config deleted through the
software_configs API DELETED; a failed resource NOT_CHECKED) and the
refusals (404, 409) in Heat's error format. The cloud types' drift is
tests/functional/test_cloud_drift.py's."""

import uuid

import pytest
import requests

from harness import helpers, polling

pytestmark = pytest.mark.parametrize("deployment", ["sqlite"], indirect=True)

TMPL = helpers.template(
    {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}},
        "r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
        "h": {"type": "OS::Heat::WaitConditionHandle"},
        "v": {"type": "OS::Heat::Value", "properties": {"value": "y"}},
        "c": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {"config": "echo hi"},
        },
        "g": {
            "type": "OS::Heat::ResourceGroup",
            "properties": {
                "count": 2,
                "resource_def": {"type": "OS::Heat::None"},
            },
        },
    }
)
HELD = helpers.template(
    {
        "a": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": "x", "hold": "drift"},
        }
    }
)


def _url(deployment, project, name, stack_id, tail):
    return "%s/stacks/%s/%s/%s" % (
        deployment.endpoint(project),
        name,
        stack_id,
        tail,
    )


def _detect(url_of):
    return requests.post(
        url_of("actions"), json={"detect_drift": None}, timeout=60
    )


def _report(url_of):
    def done():
        answer = requests.get(url_of("drift"), timeout=60)
        assert answer.status_code == 200, answer.text
        drift = answer.json()["drift"]
        return drift["drift_status"] != "DETECTION_IN_PROGRESS" and drift

    return polling.until(done, 60, "drift detection")


def _error(answer, code):
    assert answer.status_code == code, answer.text
    body = answer.json()
    assert body["code"] == code and body["error"]["message"], body
    return body["error"]


def test_report_of_own_state_types_and_nested(deployment, request):
    project = "d" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    request.addfinalizer(lambda: helpers.delete_all(heat))
    stack_id = helpers.create(heat, "drifty", TMPL)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    def url_of(tail):
        return _url(deployment, project, "drifty", stack_id, tail)

    # Never detected: 404 in Heat's format.
    _error(requests.get(url_of("drift"), timeout=60), 404)
    answer = _detect(url_of)
    assert answer.status_code == 202, answer.text
    drift = _report(url_of)
    assert drift["drift_status"] == "IN_SYNC", drift
    assert drift["detected_at"], drift
    by_name = {
        "/".join(filter(None, (e["parent_resource"], e["resource_name"]))): e
        for e in drift["resources"]
    }
    assert sorted(by_name) == [
        "a",
        "c",
        "g",
        "g/0",
        "g/1",
        "h",
        "r",
        "v",
    ], by_name
    for entry in by_name.values():
        assert entry["drift_status"] == "IN_SYNC", entry

    # Deleted through the software_configs API behind the stack's back.
    config_id = heat.resources.get(stack_id, "c").physical_resource_id
    heat.software_configs.delete(config_id)
    assert _detect(url_of).status_code == 202
    drift = _report(url_of)
    assert drift["drift_status"] == "DRIFTED", drift
    changed = {
        e["resource_name"]: e["drift_status"]
        for e in drift["resources"]
        if e["drift_status"] != "IN_SYNC"
    }
    assert changed == {"c": "DELETED"}, drift
    assert drift["counts"] == {
        "IN_SYNC": 7,
        "MODIFIED": 0,
        "DELETED": 1,
        "NOT_CHECKED": 0,
    }
    # The other project sees neither the report nor the stack.
    other = "o" + uuid.uuid4().hex[:8]
    _error(
        requests.get(
            _url(deployment, other, "drifty", stack_id, "drift"), timeout=60
        ),
        404,
    )


def test_refusals(deployment, request):
    project = "e" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    request.addfinalizer(lambda: helpers.delete_all(heat))
    unknown = str(uuid.uuid4())
    _error(
        _detect(lambda tail: _url(deployment, project, "x", unknown, tail)),
        404,
    )
    with helpers.holding(deployment.ledger, "drift"):
        stack_id = helpers.create(heat, "busy", HELD)

        def url_of(tail):
            return _url(deployment, project, "busy", stack_id, tail)

        error = _error(_detect(url_of), 409)
        assert "in progress" in error["message"], error
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    # A record that did not converge is not compared, and says why.
    heat.stacks.update(
        stack_id,
        template=helpers.template(
            {
                "a": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": "z", "fail": True},
                }
            }
        ),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert _detect(url_of).status_code == 202
    drift = _report(url_of)
    assert drift["resources"][0]["drift_status"] == "NOT_CHECKED", drift
    assert drift["resources"][0]["reason"] == "resource is UPDATE_FAILED"
    bad = requests.post(
        url_of("actions"),
        json={"detect_drift": None, "check": None},
        timeout=60,
    )
    _error(bad, 400)
