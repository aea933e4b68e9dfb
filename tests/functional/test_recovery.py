"""No stack is stranded: engines die, messages get lost, actions time out."""

import os
import signal
import time

import pytest
import sqlalchemy as sa

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.resources_ledger import assert_no_leaks

TR = "OS::Heat::TestResource"


def _db_url(deployment):
    with open(deployment.config) as f:
        for line in f:
            if line.startswith("connection = "):
                return line.split(" = ", 1)[1].strip()
    raise AssertionError("no connection in config")


def _lock_holders(deployment):
    """{pid} of the engines holding resource locks right now."""
    engine = sa.create_engine(_db_url(deployment))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT DISTINCT s.pid FROM resource r JOIN service s "
                    "ON s.engine_id = r.engine_id "
                    "WHERE r.engine_id IS NOT NULL"
                )
            )
            return {row[0] for row in rows}
    finally:
        engine.dispose()


def test_kill_engine_mid_traversal(deployment, heat):
    if deployment.kind == "sqlite":
        pytest.skip("heat-lite-all is a single process: nothing survives")
    resources = {
        "r%d" % i: {"type": TR, "properties": {"value": "v", "wait_secs": 3}}
        for i in range(6)
    }
    resources["last"] = {
        "type": TR,
        "depends_on": sorted(resources),
        "properties": {"value": "end"},
    }
    stack_id = helpers.create(heat, "killed", helpers.template(resources))
    holders = polling.until(lambda: _lock_holders(deployment))
    victim = sorted(holders)[0]
    assert victim in deployment.engine_pids()
    os.kill(victim, signal.SIGKILL)
    started = time.time()
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=90)
    recovered_in = time.time() - started
    assert recovered_in < 60
    statuses = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    assert set(statuses.values()) == {"CREATE_COMPLETE"}
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    assert any(
        "Engine went down during resource CREATE" in e.resource_status_reason
        for e in events
    )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert_no_leaks(deployment)
    polling.until(
        lambda: deployment.engines_up() >= deployment.engine_workers,
        timeout=30,
    )


@pytest.fixture(scope="module")
def short_timeouts(tmp_path_factory):
    """heat-lite-all whose stack actions time out after 3 seconds."""
    dep = deployment_mod.Deployment(
        "sqlite",
        tmp_path_factory.mktemp("timeouts"),
        extra_conf="\n[engine]\nstack_action_timeout = 3\n",
    )
    dep.start()
    yield dep
    dep.stop()


def test_stack_timeout_is_enforced(short_timeouts):
    heat = short_timeouts.client()
    tmpl = helpers.template(
        {
            "slow": {
                "type": TR,
                "properties": {
                    "value": "v",
                    "action_wait_secs": {"create": -1},
                },
            }
        }
    )
    stack_id = helpers.create(heat, "timeout", tmpl)
    stack = helpers.wait_for_status(
        heat, stack_id, "CREATE_FAILED", timeout=30
    )
    assert stack.stack_status_reason == "Timed out"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=30)
    assert_no_leaks(short_timeouts)
