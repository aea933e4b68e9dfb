"""Verified updates and creates (``verify``): the checks run after the
update phase and before the replaced records are cleaned up; a failure
rolls back onto the very physical resources the update replaced."""

import os
import signal
import uuid

import pytest
import requests

from harness import helpers, polling
from tests.resources_ledger import assert_no_leaks

TR = "OS::Heat::TestResource"
HEADERS = {"X-Auth-User": "tester"}


def _tmpl(value):
    return helpers.template(
        {
            "app": {
                "type": TR,
                "properties": {"value": value, "update_replace": True},
            },
            "db": {"type": TR, "properties": {"value": "static"}},
        },
        outputs={"healthy": {"value": {"get_attr": ["app", "output"]}}},
    )


def _output(equals, timeout=600):
    return {
        "timeout": timeout,
        "checks": [{"type": "output", "output": "healthy", "equals": equals}],
    }


SIGNAL = {"timeout": 600, "checks": [{"type": "signal"}]}


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _verifying(heat, stack_id, timeout=60):
    def check():
        stack = heat.stacks.get(stack_id, resolve_outputs=False)
        assert stack.stack_status.endswith("IN_PROGRESS"), (
            stack.stack_status,
            stack.stack_status_reason,
        )
        return "verifying" in (stack.stack_status_reason or "") and stack

    return polling.until(check, timeout, "stack verifying")


def _verdict(deployment, heat, stack_id, body, project="demo"):
    stack = heat.stacks.get(stack_id, resolve_outputs=False)
    return requests.post(
        "%s/stacks/%s/%s/verdict"
        % (deployment.endpoint(project), stack.stack_name, stack_id),
        json=body,
        headers=HEADERS,
        timeout=60,
    )


def _stack(heat, name):
    stack_id = helpers.create(heat, name + uuid.uuid4().hex[:6], _tmpl("v1"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return stack_id


def _delete(deployment, heat, stack_id):
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)


def _stack_events(heat, stack_id):
    return [
        e
        for e in heat.events.list(stack_id, sort_dir="asc")
        if e.physical_resource_id == stack_id
    ]


def test_output_check_passes_then_cleanup(deployment, heat):
    stack_id = _stack(heat, "vpass")
    before = _physical(heat, stack_id)
    heat.stacks.update(stack_id, template=_tmpl("v2"), verify=_output("v2"))
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert "completed successfully" in stack.stack_status_reason
    after = _physical(heat, stack_id)
    assert after["app"] != before["app"]  # replaced
    assert after["db"] == before["db"]
    reasons = [e.resource_status_reason for e in _stack_events(heat, stack_id)]
    verifying = [r for r in reasons if "verifying" in r]
    verified = [r for r in reasons if "verified" in r]
    assert verifying and verified, reasons
    assert reasons.index(verifying[0]) < reasons.index(verified[0])
    _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)


def test_failed_output_check_rolls_back_to_original_ids(deployment, heat):
    stack_id = _stack(heat, "vfail")
    before = _physical(heat, stack_id)
    heat.stacks.update(
        stack_id, template=_tmpl("v2"), verify=_output("v2-good", timeout=2)
    )
    stack = helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE")
    assert _physical(heat, stack_id) == before
    assert heat.stacks.get(stack_id).outputs[0]["output_value"] == "v1"
    failed = [
        e.resource_status_reason
        for e in _stack_events(heat, stack_id)
        if e.resource_status.endswith("FAILED")
    ]
    assert any(
        "Verification failed" in r and "healthy" in r and "timed out" in r
        for r in failed
    ), failed
    assert stack.stack_status_reason.startswith("Stack ROLLBACK completed")
    assert "verification failed: timed out" in stack.stack_status_reason
    _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)


def test_signal_verdicts_over_http(deployment, heat):
    stack_id = _stack(heat, "vsig")
    before = _physical(heat, stack_id)
    # Not verifying: 400 in Heat's format.
    response = _verdict(deployment, heat, stack_id, {"status": "PASS"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "StackNotVerifying"

    heat.stacks.update(stack_id, template=_tmpl("v2"), verify=SIGNAL)
    _verifying(heat, stack_id)
    # By name alone: redirected to name/id, where the client re-sends it.
    stack = heat.stacks.get(stack_id, resolve_outputs=False)
    stacks_url = deployment.endpoint("demo") + "/stacks/"
    response = requests.post(
        stacks_url + stack.stack_name + "/verdict",
        json={"status": "PASS"},
        headers=HEADERS,
        allow_redirects=False,
        timeout=60,
    )
    assert response.status_code == 302, response.text
    canonical = "%s%s/%s/verdict" % (stacks_url, stack.stack_name, stack_id)
    assert response.headers["Location"] == canonical
    response = requests.post(
        response.headers["Location"],
        json={"status": "PASS"},
        headers=HEADERS,
        timeout=60,
    )
    assert response.status_code == 200, response.text
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    upgraded = _physical(heat, stack_id)
    assert upgraded["app"] != before["app"]

    heat.stacks.update(
        stack_id, template=_tmpl("v3"), verify=SIGNAL, existing=True
    )
    _verifying(heat, stack_id)
    response = _verdict(
        deployment, heat, stack_id, {"status": "FAIL", "reason": "tests red"}
    )
    assert response.status_code == 200, response.text
    stack = helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE")
    assert "tests red" in stack.stack_status_reason
    assert _physical(heat, stack_id) == upgraded
    failed = [
        e.resource_status_reason
        for e in _stack_events(heat, stack_id)
        if e.resource_status.endswith("FAILED")
    ]
    assert any("tests red" in r for r in failed), failed
    _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)


def test_verify_on_create(deployment, heat):
    good = helpers.create(
        heat, "vc-good", _tmpl("v1"), verify=_output("v1", timeout=30)
    )
    bad = helpers.create(
        heat,
        "vc-bad",
        _tmpl("v1"),
        verify=_output("nope", timeout=2),
        disable_rollback=False,
    )
    kept = helpers.create(
        heat, "vc-kept", _tmpl("v1"), verify=_output("nope", timeout=2)
    )
    helpers.wait_for_status(heat, good, "CREATE_COMPLETE")
    stack = helpers.wait_for_status(heat, bad, "ROLLBACK_COMPLETE")
    assert list(heat.resources.list(bad)) == []
    stack = polling.until(
        lambda: (
            (s := heat.stacks.get(kept, resolve_outputs=False)).stack_status
            != "CREATE_IN_PROGRESS"
            and s
        ),
        what="create failed",
        timeout=60,
    )
    assert stack.stack_status == "CREATE_FAILED"
    assert "Verification failed" in stack.stack_status_reason
    for stack_id in (good, bad, kept):
        _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)


def test_newer_update_supersedes_and_cancel_rolls_back(deployment, heat):
    stack_id = _stack(heat, "vsup")
    before = _physical(heat, stack_id)
    heat.stacks.update(stack_id, template=_tmpl("v2"), verify=SIGNAL)
    _verifying(heat, stack_id)
    heat.stacks.update(stack_id, template=_tmpl("v3"))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.stacks.get(stack_id).outputs[0]["output_value"] == "v3"
    response = _verdict(deployment, heat, stack_id, {"status": "PASS"})
    assert response.status_code == 400
    v3 = _physical(heat, stack_id)
    assert v3["app"] != before["app"]

    heat.stacks.update(stack_id, template=_tmpl("v4"), verify=SIGNAL)
    _verifying(heat, stack_id)
    heat.actions.cancel_update(stack_id)
    helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE")
    assert _physical(heat, stack_id) == v3
    _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)


@pytest.mark.parametrize(
    "verify",
    [
        "yes",
        {},
        {"checks": []},
        {"checks": [{"type": "ping"}]},
        {"checks": [{"type": "output", "output": "healthy"}]},
        {"checks": [{"type": "signal", "extra": 1}]},
        {"checks": [{"type": "signal"}], "timeout": "10"},
        {"checks": [{"type": "signal"}], "timeout": 0},
        {"checks": [{"type": "signal"}], "other": 1},
    ],
)
def test_malformed_verify_is_400(deployment, verify):
    url = deployment.endpoint() + "/stacks"
    response = requests.post(
        url,
        json={"stack_name": "vbad", "template": _tmpl("v1"), "verify": verify},
        headers=HEADERS,
        timeout=60,
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"]["type"] == "InvalidVerify"
    assert body["code"] == 400


def test_malformed_verdict_is_400(deployment, heat):
    stack_id = _stack(heat, "vbadv")
    for body in ({}, {"status": "MAYBE"}, {"status": "PASS", "x": 1}):
        response = _verdict(deployment, heat, stack_id, body)
        assert response.status_code == 400, response.text
        assert "error" in response.json()
    _delete(deployment, heat, stack_id)


def test_engines_killed_during_verification(deployment, heat):
    """Both engine workers die while a verification runs: the restarted
    engines resume it from the database, time it out and roll back."""
    if deployment.kind == "sqlite":
        pytest.skip("heat-lite-all is a single process: nothing survives")
    stack_id = _stack(heat, "vkill")
    before = _physical(heat, stack_id)
    heat.stacks.update(
        stack_id, template=_tmpl("v2"), verify=_output("never", timeout=12)
    )
    _verifying(heat, stack_id)
    for pid in deployment.engine_pids():
        os.kill(pid, signal.SIGKILL)
    stack = helpers.wait_for_status(
        heat, stack_id, "ROLLBACK_COMPLETE", timeout=120
    )
    assert _physical(heat, stack_id) == before
    failed = [
        e.resource_status_reason
        for e in _stack_events(heat, stack_id)
        if e.resource_status.endswith("FAILED")
    ]
    assert any("timed out after 12 s" in r for r in failed), failed
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    polling.until(
        lambda: deployment.engines_up() >= deployment.engine_workers,
        timeout=30,
    )
    _delete(deployment, heat, stack_id)
    assert_no_leaks(deployment)
