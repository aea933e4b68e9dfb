"""Per-stack update semantics over HTTP, with python-heatclient and the
``openstack`` CLI, on SQLite, PostgreSQL and MariaDB: three racing updates
of a stack for each semantics (converge ends on the newest; queue runs
all three in order and ends on the third; reject answers 409 to the
second and third), what ``GET .../traversals`` shows of them, and a
queued update that survives a kill -9 of the engine running the update
before it, run exactly once.

The first update is held in its action by the TestResource's ``hold``
(``helpers.holding``): the others arrive while it runs, with no timer to
race.
"""

import json
import os
import signal
import uuid

import pytest
import sqlalchemy as sa
from heatclient import exc as heat_exc

from harness import deployment as deployment_mod
from harness import helpers, osc, polling
from tests.resources_ledger import assert_no_leaks

TR = "OS::Heat::TestResource"


def _template(value, hold):
    return helpers.template(
        {
            "a": {"type": TR, "properties": {"value": value, "hold": hold}},
            "b": {"type": "OS::Heat::None", "depends_on": "a"},
        }
    )


def _path(heat, stack_id):
    stack = heat.stacks.get(stack_id, resolve_outputs=False)
    return "/stacks/%s/%s" % (stack.stack_name, stack_id)


def _traversals(heat, stack_id):
    resp = heat.http_client.get(_path(heat, stack_id) + "/traversals")
    return resp.json()["traversals"]


def _value(heat, stack_id):
    versions = heat.http_client.get(
        _path(heat, stack_id) + "/resources/a/versions"
    ).json()["versions"]
    (current,) = [v for v in versions if v["role"] == "current"]
    return current["properties"]["value"]


def _settled(heat, stack_id):
    """Wait until nothing runs or waits any more; the traversals."""

    def done():
        found = _traversals(heat, stack_id)
        status = heat.stacks.get(stack_id, resolve_outputs=False).stack_status
        idle = not any(t["state"] in ("QUEUED", "RUNNING") for t in found)
        return found if idle and status.endswith("_COMPLETE") else None

    return polling.until(done, 120, "stack %s settled" % stack_id)


def _create(heat, name, hold, semantics=None):
    fields = {"update_semantics": semantics} if semantics else {}
    stack_id = helpers.create(heat, name, _template("v0", hold), **fields)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return stack_id


def _started(heat, stack_id):
    return [
        e
        for e in heat.events.list(stack_id)
        if e.resource_status_reason == "Stack UPDATE started"
    ]


def test_converge_three_racing_updates(deployment, heat):
    hold = "conv-" + uuid.uuid4().hex[:8]
    stack_id = _create(heat, "sem-converge", hold)
    with helpers.holding(deployment.ledger, hold):
        for value in ("v1", "v2", "v3"):
            heat.stacks.update(stack_id, template=_template(value, hold))
        running = _traversals(heat, stack_id)
    found = _settled(heat, stack_id)
    assert _value(heat, stack_id) == "v3"
    assert [t["state"] for t in running[:3]] == [
        "RUNNING",
        "SUPERSEDED",
        "SUPERSEDED",
    ]
    updates = [t for t in found if t["action"] == "UPDATE"][::-1]
    assert [t["state"] for t in updates] == [
        "SUPERSEDED",
        "SUPERSEDED",
        "COMPLETE",
    ]
    assert updates[0]["superseded_by"] == updates[1]["id"]
    assert updates[1]["superseded_by"] == updates[2]["id"]
    assert {t["requested_by"] for t in updates} == {"tester"}
    reasons = [e.resource_status_reason for e in heat.events.list(stack_id)]
    assert (
        "Traversal %s (UPDATE) superseded by traversal %s (UPDATE, by tester)"
        % (updates[0]["id"], updates[1]["id"])
    ) in reasons
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_queue_three_racing_updates(deployment, heat):
    hold = "queue-" + uuid.uuid4().hex[:8]
    stack_id = _create(heat, "sem-queue", hold, "queue")
    assert heat.stacks.get(stack_id).update_semantics == "queue"
    with helpers.holding(deployment.ledger, hold):
        for value in ("v1", "v2", "v3"):
            heat.stacks.update(stack_id, template=_template(value, hold))
        waiting = _traversals(heat, stack_id)
        assert [t["state"] for t in waiting[:3]] == [
            "QUEUED",
            "QUEUED",
            "RUNNING",
        ]
        assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    found = _settled(heat, stack_id)
    assert _value(heat, stack_id) == "v3"
    updates = [t for t in found if t["action"] == "UPDATE"][::-1]
    assert [t["id"] for t in updates] == [t["id"] for t in waiting[2::-1]]
    assert [t["state"] for t in updates] == ["COMPLETE"] * 3
    for before, after in zip(updates, updates[1:], strict=False):
        assert after["started_at"] >= before["finished_at"]
    assert len(_started(heat, stack_id)) == 3
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_reject_three_racing_updates(deployment, heat):
    hold = "reject-" + uuid.uuid4().hex[:8]
    stack_id = _create(heat, "sem-reject", hold, "reject")
    with helpers.holding(deployment.ledger, hold):
        heat.stacks.update(stack_id, template=_template("v1", hold))
        for value in ("v2", "v3"):
            with pytest.raises(heat_exc.HTTPConflict) as info:
                heat.stacks.update(stack_id, template=_template(value, hold))
            error = info.value.error
            assert error["code"] == 409
            assert error["error"]["type"] == "ActionInProgress"
            assert (
                "already has an action (UPDATE) in progress"
                in (error["error"]["message"])
            )
    found = _settled(heat, stack_id)
    assert _value(heat, stack_id) == "v1"
    assert [t["action"] for t in found] == ["UPDATE", "CREATE"]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_traversals_of_another_project_are_not_found(deployment, heat):
    stack_id = _create(heat, "sem-isolated", "none")
    path = _path(heat, stack_id)
    other = deployment.client(project="other-" + uuid.uuid4().hex[:6])
    with pytest.raises(heat_exc.HTTPNotFound):
        other.http_client.get(path + "/traversals")
    with pytest.raises(heat_exc.HTTPNotFound):
        other.http_client.post(
            path + "/actions", data={"update_semantics": "queue"}
        )
    with pytest.raises(heat_exc.HTTPBadRequest):
        heat.http_client.post(
            path + "/actions", data={"update_semantics": "sometimes"}
        )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


# The CLI ---------------------------------------------------------------------
def _osc(deployment, *args):
    cmd = ["--os-auth-type", "none", "--os-endpoint", deployment.endpoint()]
    result = osc.run(cmd + list(args), timeout=180)
    assert result.returncode == 0, "%s\n%s%s" % (
        " ".join(args),
        result.stdout,
        result.stderr,
    )
    return result.stdout


@pytest.mark.parametrize("deployment", ["sqlite"], indirect=True)
def test_cli_semantics_list_and_cancel(deployment, heat):
    hold = "cli-" + uuid.uuid4().hex[:8]
    stack_id = _create(heat, "sem-cli", hold)
    _osc(deployment, "stack", "semantics", "set", stack_id, "queue")
    assert heat.stacks.get(stack_id).update_semantics == "queue"
    with helpers.holding(deployment.ledger, hold):
        for value in ("v1", "v2"):
            heat.stacks.update(stack_id, template=_template(value, hold))
        listed = json.loads(
            _osc(
                deployment,
                "stack",
                "traversal",
                "list",
                stack_id,
                "-f",
                "json",
            )
        )
        assert [t["State"] for t in listed[:2]] == ["QUEUED", "RUNNING"]
        cancelled = json.loads(
            _osc(
                deployment,
                "stack",
                "traversal",
                "cancel",
                stack_id,
                listed[0]["ID"],
                "-f",
                "json",
            )
        )
        assert cancelled["State"] == "CANCELLED"
    _settled(heat, stack_id)
    assert _value(heat, stack_id) == "v1"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


# kill -9 ---------------------------------------------------------------------
def _lock_holder(dep):
    """The engine worker PID that holds the lock of a record."""
    with open(dep.config) as f:
        url = next(
            line.split(" = ", 1)[1].strip()
            for line in f
            if line.startswith("connection = ")
        )
    engine = sa.create_engine(url)
    pids = set(dep.engine_pids())

    def holders():
        with engine.connect() as conn:
            found = {
                row[0]
                for row in conn.execute(
                    sa.text(
                        "SELECT DISTINCT s.pid FROM resource r JOIN service s"
                        " ON s.engine_id = r.engine_id"
                        " WHERE r.engine_id IS NOT NULL"
                    )
                )
            }
        return sorted(found & pids)

    try:
        return polling.until(holders, 60, "an engine holding a lock")[0]
    finally:
        engine.dispose()


@pytest.fixture
def two_engines(request, tmp_path):
    dep = deployment_mod.Deployment(request.param, tmp_path / request.param)
    os.makedirs(dep.workdir, exist_ok=True)
    dep.start()
    yield dep
    dep.stop()


@pytest.mark.xdist_group("chaos-engines")
@pytest.mark.parametrize("two_engines", ["postgresql", "mysql"], indirect=True)
def test_kill9_with_an_update_queued_runs_it_once(two_engines):
    dep = two_engines
    heat = dep.client()
    hold = "kill-" + uuid.uuid4().hex[:8]
    stack_id = _create(heat, "sem-kill", hold, "queue")
    with helpers.holding(dep.ledger, hold):
        heat.stacks.update(stack_id, template=_template("v1", hold))
        heat.stacks.update(stack_id, template=_template("v2", hold))
        os.kill(_lock_holder(dep), signal.SIGKILL)
        waiting = polling.retrying(
            lambda: _traversals(heat, stack_id),
            heat_exc.HTTPServiceUnavailable,
            60,
        )
        assert [t["state"] for t in waiting[:2]] == ["QUEUED", "RUNNING"]
    found = polling.retrying(
        lambda: _settled(heat, stack_id), heat_exc.HTTPServiceUnavailable, 180
    )
    assert _value(heat, stack_id) == "v2"
    updates = [t for t in found if t["action"] == "UPDATE"][::-1]
    assert [t["state"] for t in updates] == ["COMPLETE", "COMPLETE"]
    assert updates[1]["id"] == waiting[0]["id"]
    assert len(_started(heat, stack_id)) == 2
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(dep)
