"""Drift-aware previews and updates without the cloud, on PostgreSQL and
MariaDB: the one built-in drift a stack can have here is a software
config deleted through the software_configs API (DELETED; every other
``OS::Heat`` type's state is its own record). The preview keeps it (a
plain update) or re-creates it (``revert_drift``); a plain update of an
unrelated resource leaves it deleted and says so in an event; a revert
refuses a stale report (409, Heat's format); after a new detection the
revert re-creates the config (a new one, readable through the API) and
the next detection is IN_SYNC. The cloud types' revert is
tests/functional/test_cloud_drift_revert.py's."""

import uuid

import pytest
import requests
from heatclient import exc as heat_exc

from harness import helpers
from tests.functional import test_api_drift

pytestmark = pytest.mark.parametrize(
    "deployment", ["postgresql", "mysql"], indirect=True
)


def _template(value):
    return helpers.template(
        {
            "c": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {"config": "echo hi"},
            },
            "v": {"type": "OS::Heat::Value", "properties": {"value": value}},
        }
    )


def _detect(url_of):
    answer = test_api_drift._detect(url_of)
    assert answer.status_code == 202, answer.text
    return test_api_drift._report(url_of)


def _preview(url_of, body):
    answer = requests.patch(url_of("preview"), json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    kinds = {
        r["resource_name"]: (kind, r.get("drift"))
        for kind, items in preview["resource_changes"].items()
        for r in items
    }
    return preview["drift"], kinds


def test_deleted_config_kept_then_recreated(deployment, request):
    project = "r" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    request.addfinalizer(lambda: helpers.delete_all(heat))
    stack_id = helpers.create(heat, "reverty", _template("x"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    def url_of(tail):
        return "%s/stacks/reverty/%s/%s" % (
            deployment.endpoint(project),
            stack_id,
            tail,
        )

    stack_url = url_of("")[:-1]
    config_id = heat.resources.get(stack_id, "c").physical_resource_id
    assert _detect(url_of)["drift_status"] == "IN_SYNC"
    heat.software_configs.delete(config_id)
    assert _detect(url_of)["drift_status"] == "DRIFTED"

    state, kinds = _preview(url_of, {})
    assert (state["state"], state["revert_drift"]) == ("CURRENT", False)
    assert kinds == {
        "c": ("unchanged", {"status": "DELETED", "action": "keep"}),
        "v": ("unchanged", None),
    }
    state, kinds = _preview(url_of, {"revert_drift": True})
    assert state["revert_drift"] is True
    assert kinds == {
        "c": ("replaced", {"status": "DELETED", "action": "recreate"}),
        "v": ("unchanged", None),
    }

    # A plain update of the other resource: the config stays deleted.
    heat.stacks.update(stack_id, template=_template("y"), existing=True)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "c").physical_resource_id == (
        config_id
    )
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.software_configs.get(config_id)
    (kept,) = [
        e
        for e in heat.events.list(stack_id, resource_name="c")
        if e.resource_status == "DRIFT_KEPT"
    ]
    assert kept.resource_status_reason == (
        "Drift left in place: deleted outside the stack (revert_drift not set)"
    )

    # The report is older than that update.
    state, kinds = _preview(url_of, {"revert_drift": True})
    assert state["state"] == "STALE", state
    assert kinds["c"] == ("unchanged", None)
    refused = requests.patch(
        stack_url, json={"revert_drift": True}, timeout=60
    )
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert (
        body["code"] == 409
        and "detect drift again" in (body["error"]["message"])
    ), body
    # Not a boolean: 400.
    bad = requests.patch(stack_url, json={"revert_drift": "maybe"}, timeout=60)
    assert bad.status_code == 400, bad.text

    assert _detect(url_of)["drift_status"] == "DRIFTED"
    answer = requests.patch(stack_url, json={"revert_drift": True}, timeout=60)
    assert answer.status_code == 202, answer.text
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    renewed = heat.resources.get(stack_id, "c").physical_resource_id
    assert renewed != config_id
    assert heat.software_configs.get(renewed).config == "echo hi"
    reverting = [
        e.resource_status_reason
        for e in heat.events.list(stack_id, resource_name="c")
        if e.resource_status == "DRIFT_REVERTING"
    ]
    assert reverting == ["Deleted outside the stack: re-created"]
    drift = _detect(url_of)
    assert drift["drift_status"] == "IN_SYNC", drift
    # A revert with nothing drifted changes nothing.
    answer = requests.patch(stack_url, json={"revert_drift": True}, timeout=60)
    assert answer.status_code == 202, answer.text
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "c").physical_resource_id == renewed


def test_a_saved_plan_reverts_the_drift_it_was_reviewed_with(
    deployment, request
):
    """A plan saved with ``revert_drift`` shows the drift it will put
    back, and applying it re-creates the deleted config (the plan's
    update goes through the same drift inputs as a PATCH)."""
    project = "p" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    request.addfinalizer(lambda: helpers.delete_all(heat))
    stack_id = helpers.create(heat, "planned", _template("x"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    def url_of(tail):
        return "%s/stacks/planned/%s/%s" % (
            deployment.endpoint(project),
            stack_id,
            tail,
        )

    config_id = heat.resources.get(stack_id, "c").physical_resource_id
    heat.software_configs.delete(config_id)
    assert _detect(url_of)["drift_status"] == "DRIFTED"

    made = requests.post(
        url_of("plans"),
        json={"existing": True, "revert_drift": True},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    plan = made.json()["plan"]
    changes = plan["resource_changes"]
    [replaced] = changes["replaced"]
    assert replaced["resource_name"] == "c"
    assert replaced["drift"] == {"status": "DELETED", "action": "recreate"}

    applied = requests.post(
        url_of("plans/%s/apply" % plan["id"]), json={}, timeout=60
    )
    assert applied.status_code == 202, applied.text
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    renewed = heat.resources.get(stack_id, "c").physical_resource_id
    assert renewed != config_id
    assert heat.software_configs.get(renewed).config == "echo hi"
    assert _detect(url_of)["drift_status"] == "IN_SYNC"
