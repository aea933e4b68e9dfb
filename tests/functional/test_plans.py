"""Saved plans over HTTP on SQLite, PostgreSQL and MariaDB
(doc/specs/saved_plans.md): a plan applied exactly (whatever the apply's
body says), and refused in Heat's error format (409 "stale plan") after
a concurrent update, after a rollback, after a change of a nested
stack's record alone and after a detection found new drift; 409 once
expired or applied; 404 for another project; and the ``openstack stack
plan`` commands through the real openstackclient and heatclient.

The concurrent update is held in its action by the TestResource's
``hold`` (``helpers.holding``), so the apply meets it running with no
timer to race.
"""

import datetime
import json
import os
import uuid

import pytest
import requests
import sqlalchemy as sa
import yaml

from harness import helpers, osc, polling

TR = "OS::Heat::TestResource"


def _template(value, hold=None):
    props = {"value": value}
    if hold:
        props["hold"] = hold
    return helpers.template(
        {
            "a": {"type": TR, "properties": props},
            "n": {"type": "OS::Heat::None"},
        }
    )


class _Stack:
    """A stack of one project and the URLs of its plans."""

    def __init__(self, deployment, request, tmpl, name="planned", **fields):
        self.project = "p" + uuid.uuid4().hex[:8]
        self.heat = deployment.client(self.project)
        request.addfinalizer(lambda: helpers.delete_all(self.heat))
        self.id = helpers.create(self.heat, name, tmpl, **fields)
        helpers.wait_for_status(self.heat, self.id, "CREATE_COMPLETE")
        self.name = name
        self.deployment = deployment

    def url(self, tail="", project=None):
        return "%s/stacks/%s/%s/plans%s" % (
            self.deployment.endpoint(project or self.project),
            self.name,
            self.id,
            tail,
        )

    def plan(self, body, code=201):
        answer = requests.post(self.url(), json=body, timeout=60)
        assert answer.status_code == code, answer.text
        return answer.json()["plan"] if code == 201 else answer

    def apply(self, plan_id, body=None, project=None):
        return requests.post(
            self.url("/%s/apply" % plan_id, project),
            json=body or {},
            timeout=60,
        )

    def show(self, plan_id, project=None):
        return requests.get(self.url("/" + plan_id, project), timeout=60)

    def value(self, name="a"):
        return self.heat.stacks.template(self.id)["resources"][name][
            "properties"
        ]["value"]


def _error(answer, code, kind):
    assert answer.status_code == code, answer.text
    body = answer.json()
    assert body["code"] == code and body["error"]["type"] == kind, body
    return body["error"]["message"]


def test_a_plan_is_applied_exactly(deployment, request):
    stack = _Stack(deployment, request, _template("v0"))
    plan = stack.plan({"template": _template("v1")})
    assert plan["status"] == "READY" and plan["stack_id"] == stack.id
    changes = plan["resource_changes"]
    assert [r["resource_name"] for r in changes["updated"]] == ["a"]
    assert [r["resource_name"] for r in changes["unchanged"]] == ["n"]
    assert plan["basis"]["records"] == 2
    assert plan["basis"]["stacks"] == {stack.id: plan["traversal"]}
    # the same shape as the preview of the same body
    preview = stack.heat.http_client.put(
        "/stacks/%s/%s/preview" % (stack.name, stack.id),
        data={"template": _template("v1")},
    ).json()["resource_changes"]
    assert {k: len(v) for k, v in preview.items()} == {
        k: len(v) for k, v in changes.items()
    }
    shown = stack.show(plan["id"]).json()["plan"]
    assert shown["resource_changes"] == changes
    assert shown["status"] == "READY"
    listed = requests.get(stack.url(), timeout=60).json()["plans"]
    assert [p["id"] for p in listed] == [plan["id"]]
    # the apply's own body is not an update: the plan is
    answer = stack.apply(plan["id"], {"template": _template("v9")})
    assert answer.status_code == 202, answer.text
    applied = answer.json()["plan"]
    assert applied["status"] == "APPLIED" and applied["applied_traversal"]
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    assert stack.value() == "v1"
    assert stack.heat.resources.get(stack.id, "a").attributes["output"] == "v1"
    message = _error(stack.apply(plan["id"]), 409, "PlanAlreadyApplied")
    assert "already applied" in message
    # a PATCH plan keeps what it does not name
    patch = stack.plan({"existing": True, "parameters": {}})
    assert stack.apply(patch["id"]).status_code == 202
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    assert stack.value() == "v1"
    assert requests.delete(stack.url("/" + patch["id"]), timeout=60).ok
    _error(stack.show(patch["id"]), 404, "PlanNotFound")


def test_stale_after_a_concurrent_update(deployment, request):
    hold = "plan-" + uuid.uuid4().hex[:8]
    stack = _Stack(deployment, request, _template("v0", hold))
    plan = stack.plan({"template": _template("v1", hold)})
    with helpers.holding(deployment.ledger, hold):
        stack.heat.stacks.update(stack.id, template=_template("v2", hold))
        message = _error(stack.apply(plan["id"]), 409, "StalePlan")
        assert message.startswith("stale plan"), message
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    assert stack.value() == "v2"
    shown = stack.show(plan["id"]).json()["plan"]
    assert shown["status"] == "STALE" and shown["status_reason"], shown
    _error(stack.apply(plan["id"]), 409, "StalePlan")
    # a plan made after the update converged applies
    fresh = stack.plan({"template": _template("v3", hold)})
    assert stack.apply(fresh["id"]).status_code == 202
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    assert stack.value() == "v3"


def test_stale_after_a_rollback(deployment, request):
    stack = _Stack(
        deployment, request, _template("v0"), disable_rollback=False
    )
    plan = stack.plan({"template": _template("v1")})
    failing = helpers.template(
        {"a": {"type": TR, "properties": {"value": "bad", "fail": True}}}
    )
    stack.heat.stacks.update(
        stack.id, template=failing, disable_rollback=False
    )
    helpers.wait_for_status(stack.heat, stack.id, "ROLLBACK_COMPLETE")
    assert stack.value() == "v0"
    shown = stack.show(plan["id"]).json()["plan"]
    assert shown["status"] == "STALE", shown
    message = _error(stack.apply(plan["id"]), 409, "StalePlan")
    assert "changed" in message
    assert stack.value() == "v0"


def test_another_project_gets_404(deployment, request):
    stack = _Stack(deployment, request, _template("v0"))
    plan = stack.plan({"template": _template("v1")})
    other = "o" + uuid.uuid4().hex[:8]
    _error(stack.show(plan["id"], project=other), 404, "StackNotFound")
    _error(stack.apply(plan["id"], project=other), 404, "StackNotFound")
    answer = requests.get(stack.url(project=other), timeout=60)
    _error(answer, 404, "StackNotFound")
    answer = requests.post(
        stack.url(project=other), json={"template": _template("x")}, timeout=60
    )
    _error(answer, 404, "StackNotFound")
    # a plan of one stack is not found under another of the same project
    second = helpers.create(stack.heat, "second", _template("w"))
    answer = requests.get(
        "%s/stacks/second/%s/plans/%s"
        % (deployment.endpoint(stack.project), second, plan["id"]),
        timeout=60,
    )
    _error(answer, 404, "PlanNotFound")
    assert stack.show(plan["id"]).status_code == 200


def test_an_expired_plan_is_refused(deployment, request):
    stack = _Stack(deployment, request, _template("v0"))
    plan = stack.plan({"template": _template("v1")})
    past = datetime.datetime.now(datetime.UTC).replace(
        tzinfo=None
    ) - datetime.timedelta(seconds=1)
    engine = sa.create_engine(deployment.db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE stack_plan SET expires_at = :t WHERE id = :i"),
                {"t": past, "i": plan["id"]},
            )
    finally:
        engine.dispose()
    assert stack.show(plan["id"]).json()["plan"]["status"] == "EXPIRED"
    message = _error(stack.apply(plan["id"]), 409, "PlanExpired")
    assert "expired" in message
    assert stack.value() == "v0"


CHILD = yaml.safe_dump(_template("c0"))


def _parent(value):
    return helpers.template(
        {
            "child": {"type": "child.yaml"},
            "b": {"type": TR, "properties": {"value": value}},
        }
    )


def test_a_nested_records_change_stales_the_plan(deployment, request):
    stack = _Stack(
        deployment, request, _parent("p0"), files={"child.yaml": CHILD}
    )
    child_id = stack.heat.resources.get(stack.id, "child").physical_resource_id
    plan = stack.plan(
        {"template": _parent("p1"), "files": {"child.yaml": CHILD}}
    )
    assert set(plan["basis"]["stacks"]) == {stack.id, child_id}
    assert plan["basis"]["records"] == 4
    # the nested stack's changes are in the plan (show_nested)
    names = {
        r["resource_name"]
        for kind in plan["resource_changes"].values()
        for r in kind
    }
    assert {"a", "n", "b", "child"} <= names
    # Only the nested stack's record changes; the parent's traversal and
    # records stay as they were.
    before = stack.heat.stacks.get(stack.id).stack_status
    stack.heat.resources.mark_unhealthy(child_id, "a", True, "by hand")
    assert stack.heat.stacks.get(stack.id).stack_status == before
    message = _error(stack.apply(plan["id"]), 409, "StalePlan")
    assert "%s/a/" % child_id in message, message
    assert stack.value("b") == "p0"


def test_new_drift_stales_the_plan(deployment, request):
    tmpl = helpers.template(
        {
            "c": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {"config": "echo hi"},
            },
            "a": {"type": TR, "properties": {"value": "v0"}},
        }
    )
    stack = _Stack(deployment, request, tmpl)
    base = "%s/stacks/%s/%s" % (
        deployment.endpoint(stack.project),
        stack.name,
        stack.id,
    )

    def detect():
        answer = requests.post(
            base + "/actions", json={"detect_drift": None}, timeout=60
        )
        assert answer.status_code == 202, answer.text

        def done():
            drift = requests.get(base + "/drift", timeout=60).json()["drift"]
            return drift["drift_status"] != "DETECTION_IN_PROGRESS" and drift

        return polling.until(done, 60, "drift detection")

    assert detect()["drift_status"] == "IN_SYNC"
    changed = json.loads(json.dumps(tmpl))
    changed["resources"]["a"]["properties"]["value"] = "v1"
    plan = stack.plan({"template": changed})
    # a detection that finds nothing new leaves the plan applicable
    assert detect()["drift_status"] == "IN_SYNC"
    assert stack.show(plan["id"]).json()["plan"]["status"] == "READY"
    config_id = stack.heat.resources.get(stack.id, "c").physical_resource_id
    stack.heat.software_configs.delete(config_id)
    assert detect()["drift_status"] == "DRIFTED"
    message = _error(stack.apply(plan["id"]), 409, "StalePlan")
    assert "drift report" in message, message
    assert stack.value() == "v0"


def _osc(deployment, project, *args, ok=True):
    result = osc.run(
        [
            "--os-auth-type",
            "none",
            "--os-endpoint",
            deployment.endpoint(project),
            *args,
        ],
        timeout=180,
    )
    if ok:
        assert result.returncode == 0, "%s\n%s%s" % (
            " ".join(args),
            result.stdout,
            result.stderr,
        )
    return result


@pytest.mark.parametrize("deployment", ["sqlite"], indirect=True)
def test_the_plan_commands(deployment, request, tmp_path):
    stack = _Stack(deployment, request, _template("v0"), name="cli-planned")
    path = os.path.join(tmp_path, "v1.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(_template("v1"), f)

    def json_of(*args):
        return json.loads(
            _osc(deployment, stack.project, *args, "-f", "json").stdout
        )

    made = json_of("stack", "plan", "create", stack.name, "-t", path)
    assert made["Status"] == "READY"
    assert made["Resource Changes"]["updated"] == ["a"]
    plan_id = made["ID"]
    listed = json_of("stack", "plan", "list", stack.name)
    assert [p["ID"] for p in listed] == [plan_id]
    shown = json_of("stack", "plan", "show", stack.name, plan_id)
    assert shown["Status"] == "READY"
    applied = json_of("stack", "plan", "apply", stack.name, plan_id)
    assert applied["Status"] == "APPLIED"
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    assert stack.value() == "v1"
    again = _osc(
        deployment,
        stack.project,
        "stack",
        "plan",
        "apply",
        stack.name,
        plan_id,
        ok=False,
    )
    assert again.returncode != 0
    assert "already applied" in again.stderr, again.stderr
    _osc(
        deployment,
        stack.project,
        "stack",
        "plan",
        "delete",
        stack.name,
        plan_id,
    )
    assert json_of("stack", "plan", "list", stack.name) == []
    gone = _osc(
        deployment,
        stack.project,
        "stack",
        "plan",
        "show",
        stack.name,
        plan_id,
        ok=False,
    )
    assert gone.returncode != 0 and "could not be found" in gone.stderr


def test_bad_input_is_400(deployment, request):
    stack = _Stack(deployment, request, _template("v0"), name="bad-input")
    for body in (
        {"template": 5},
        {"bogus": 1},
        {"template": _template("v1"), "existing": "maybe"},
        {"template": _template("v1"), "parameters": []},
        {},
    ):
        answer = requests.post(stack.url(), json=body, timeout=60)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["error"]["message"], answer.text
    # refused by the engine's checks: the same answer as the preview's
    unknown = helpers.template({"x": {"type": "No::Such::Type"}})
    answer = requests.post(stack.url(), json={"template": unknown}, timeout=60)
    preview = requests.put(
        stack.url()[: -len("/plans")] + "/preview",
        json={"template": unknown},
        timeout=60,
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.status_code == preview.status_code
    assert answer.json()["error"]["type"] == preview.json()["error"]["type"]
    answer = requests.post(
        stack.url("/%s/apply" % uuid.uuid4()),
        data=b"{not json",
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    _error(answer, 400, "BadRequest")
    for query in ("?limit=x", "?limit=-1", "?marker=%s" % uuid.uuid4()):
        answer = requests.get(stack.url(query), timeout=60)
        assert answer.status_code == 400, (query, answer.text)
    _error(stack.show("x" * 300), 404, "PlanNotFound")
    _error(stack.apply("x" * 300), 404, "PlanNotFound")
    assert requests.get(stack.url(), timeout=60).json()["plans"] == []


def test_a_reject_stack_refuses_a_plan_while_busy(deployment, request):
    hold = "rej-" + uuid.uuid4().hex[:8]
    stack = _Stack(
        deployment, request, _template("v0", hold), update_semantics="reject"
    )
    with helpers.holding(deployment.ledger, hold):
        stack.heat.stacks.update(stack.id, template=_template("v1", hold))
        # made while the update runs, on what it has done so far
        plan = stack.plan({"template": _template("v2", hold)})
        message = _error(stack.apply(plan["id"]), 409, "ActionInProgress")
        assert "in progress" in message
    helpers.wait_for_status(stack.heat, stack.id, "UPDATE_COMPLETE")
    # the running update went on: what the plan saw moved
    _error(stack.apply(plan["id"]), 409, "StalePlan")
    assert stack.value() == "v1"
