"""Why an action still running is stopped (issue 26 item 4): the
resources running beside one that failed say the operation failed, and
which resource; "user triggered cancel" is kept for the user's cancel.
The engine runs in this process on an SQLite file."""

import uuid

import pytest

from harness import endpoints, inprocess, polling
from heat_lite.common import context
from heat_lite.db import records as conv
from heat_lite.db import software_deployments as db_deployments

CTXT = context.RequestContext(project_id="p", user_id="u")
TEST = "OS::Heat::TestResource"
# Runs until it is stopped: polled each second.
RUNNING = {"type": TEST, "properties": {"wait_secs": -1}}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite", tmp_path_factory.mktemp("aborted")
    ) as proc:
        yield endpoints.Engine(proc.ops, proc.services)


def _create(engine, resources, environment=None):
    tmpl = {"heat_template_version": "2018-08-31", "resources": resources}
    name = "a" + uuid.uuid4().hex[:8]
    return engine.create_stack(
        CTXT, name, tmpl, {}, {}, environment, None, {"disable_rollback": True}
    )


def _running(ident, name):
    def running():
        return any(
            r["name"] == name and r["status"] == "IN_PROGRESS"
            for r in conv.resource_get_all(ident["stack_id"])
        )

    polling.until(running, 30, "%s running" % name)


def _stopped(ident, name):
    """The record ``name`` once its action failed: its status reason."""

    def failed():
        for record in conv.resource_get_all(ident["stack_id"]):
            if record["name"] == name and record["status"] == "FAILED":
                return record["status_reason"]
        return None

    return polling.until(failed, 30, "%s FAILED" % name)


def _event_reasons(engine, ident, name):
    return [
        e["resource_status_reason"]
        for e in engine.list_events(CTXT, ident, resource_name=name)
        if e["resource_status"].endswith("FAILED")
    ]


def test_the_siblings_of_a_failed_resource_say_the_operation_failed(engine):
    # ``bad`` waits at a breakpoint until ``slow`` runs, then fails.
    hook = {
        "resource_registry": {"resources": {"bad": {"hooks": "pre-create"}}}
    }
    ident = _create(
        engine,
        {"bad": {"type": TEST, "properties": {"fail": True}}, "slow": RUNNING},
        hook,
    )
    _running(ident, "slow")
    engine.resource_signal(CTXT, ident, "bad", {"unset_hook": "pre-create"})
    polling.stack_reaches(ident["stack_id"], "CREATE_FAILED")
    failure = "ValueError: resources.bad: Test Resource failed bad"
    reason = (
        "OperationFailed: resources.slow: CREATE aborted: stack CREATE "
        "failed: Resource CREATE failed: " + failure
    )
    assert _stopped(ident, "slow") == reason
    assert _event_reasons(engine, ident, "slow") == [reason]
    assert _stopped(ident, "bad") == failure


def test_a_cancel_is_still_a_user_triggered_cancel(engine):
    ident = _create(engine, {"slow": RUNNING})
    _running(ident, "slow")
    engine.stack_cancel_update(CTXT, ident, cancel_with_rollback=False)
    polling.stack_reaches(ident["stack_id"], "CREATE_FAILED")
    assert _stopped(ident, "slow") == (
        "ActionAborted: resources.slow: CREATE aborted (user triggered cancel)"
    )


def test_a_deployment_stopped_half_way_is_failed_by_its_cancel(engine):
    """The deployment still waiting for its agent when the operation
    fails elsewhere is marked FAILED (Heat's create-cancel), so that the
    agent and the API see it will not complete."""
    hook = {
        "resource_registry": {"resources": {"bad": {"hooks": "pre-create"}}}
    }
    server = str(uuid.uuid4())
    ident = _create(
        engine,
        {
            "bad": {"type": TEST, "properties": {"fail": True}},
            "dep": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {"server": server},
            },
        },
        hook,
    )
    _running(ident, "dep")
    engine.resource_signal(CTXT, ident, "bad", {"unset_hook": "pre-create"})
    _stopped(ident, "dep")
    (record,) = [
        r
        for r in conv.resource_get_all(ident["stack_id"])
        if r["name"] == "dep"
    ]
    deployment = db_deployments.software_deployment_get(
        record["physical_resource_id"], "p"
    )
    assert (deployment["status"], deployment["status_reason"]) == (
        "FAILED",
        "Deployment cancelled.",
    )
