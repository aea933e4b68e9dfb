"""The seed's scenario end to end, on PostgreSQL + RabbitMQ with two
engines: 30 applications on PHP 5.4.45, one rollout to 5.4.46 with a
canary, batches of 10 and max_failures; the applications whose
``healthy`` output fails under the new version go back to the old one on
their original physical resources, the others end upgraded. Then the
same with the engine running the rollout killed (kill -9) mid-rollout:
another engine carries on, no target is updated twice.
"""

import os
import signal
import time

import pytest
import requests

from harness import helpers, polling
from tests.functional.test_chaos_engines import (  # noqa: F401 - fixture
    _query,
    _retrying,
    _wait_status,
    deploy,
)
from tests.resources_ledger import assert_no_leaks
from tests.unit.engine.test_rollouts import NEW, OLD, app_template

HEADERS = {"X-Auth-User": "tester"}
COUNT = 30
BROKEN = (5, 12, 19, 26)  # fail their checks under NEW
REPLACED = range(0, COUNT, 3)  # replace their ``app`` on upgrade
VERIFY = {
    "timeout": 4,
    "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
}


def _apps(heat):
    ids = {}
    for i in range(COUNT):
        name = "app-%02d" % i
        ids[name] = helpers.create(
            heat,
            name,
            app_template(),
            parameters={
                "broken_on": NEW if i in BROKEN else "none",
                "replace": i in REPLACED,
            },
        )
    for stack_id in ids.values():
        _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    return ids


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _rollout(dep):
    response = requests.post(
        dep.endpoint() + "/rollouts",
        json={
            "name": "php-" + NEW,
            "selector": {
                "stack_name": "app-*",
                "parameters": {"php_version": "5.4.*"},
            },
            "update": {"parameters": {"php_version": NEW}},
            "verify": VERIFY,
            "strategy": {"canary": 1, "batch_size": 10, "max_failures": 5},
        },
        headers=HEADERS,
        timeout=60,
    )
    assert response.status_code == 201, response.text
    return response.json()["rollout"]


def _show(dep, rollout_id):
    response = requests.get(
        dep.endpoint() + "/rollouts/" + rollout_id, headers=HEADERS, timeout=60
    )
    assert response.status_code == 200, response.text
    return response.json()["rollout"]


def _finished(dep, rollout_id, timeout=120):
    def done():
        try:
            rollout = _show(dep, rollout_id)
        except (AssertionError, requests.RequestException):
            return None  # an engine being killed: ask again
        return rollout if rollout["status"] != "IN_PROGRESS" else None

    return polling.until(done, timeout, "rollout finished")


def _check_outcome(dep, heat, ids, before, rollout):
    assert rollout["status"] == "COMPLETE", rollout["status_reason"]
    assert rollout["counts"]["SUCCEEDED"] == COUNT - len(BROKEN)
    assert rollout["counts"]["ROLLED_BACK"] == len(BROKEN)
    assert sum(rollout["counts"].values()) == COUNT
    assert [t["batch"] for t in rollout["targets"]] == [0] + [
        1 + i // 10 for i in range(COUNT - 1)
    ]
    for i in range(COUNT):
        name = "app-%02d" % i
        stack = heat.stacks.get(ids[name])
        version = {o["output_key"]: o["output_value"] for o in stack.outputs}[
            "version"
        ]
        physical = _physical(heat, ids[name])
        if i in BROKEN:
            assert stack.stack_status == "ROLLBACK_COMPLETE", name
            assert version == OLD
            # The very resources the update replaced, revived.
            assert physical == before[name], name
        else:
            assert stack.stack_status == "UPDATE_COMPLETE", name
            assert version == NEW
            assert (physical["app"] != before[name]["app"]) == (
                i in REPLACED
            ), name
            assert physical["db"] == before[name]["db"]
    # No target was updated twice: one verified update per stack.
    per_stack = _query(
        dep, "SELECT stack_id, count(*) FROM verification GROUP BY stack_id"
    )
    assert sorted(n for _s, n in per_stack) == [1] * COUNT


def _delete_all(heat, ids, dep):
    for stack_id in ids.values():
        _retrying(lambda s=stack_id: heat.stacks.delete(s))
    for stack_id in ids.values():
        _wait_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
    assert_no_leaks(dep)


@pytest.mark.timeout(300)
def test_php_fleet_upgrade(deploy):  # noqa: F811 - fixture
    dep = deploy("postgresql")
    heat = dep.client()
    ids = _apps(heat)
    before = {n: _physical(heat, s) for n, s in ids.items()}
    started = time.time()
    rollout = _rollout(dep)
    assert len(rollout["targets"]) == COUNT
    done = _finished(dep, rollout["id"])
    print("\nROLLOUT 30 stacks: %.1f s" % (time.time() - started))
    _check_outcome(dep, heat, ids, before, done)
    _delete_all(heat, ids, dep)


@pytest.mark.timeout(300)
def test_php_fleet_upgrade_with_its_engine_killed(deploy):  # noqa: F811
    dep = deploy("postgresql")
    heat = dep.client()
    ids = _apps(heat)
    before = {n: _physical(heat, s) for n, s in ids.items()}
    rollout = _rollout(dep)

    def in_flight():
        shown = _show(dep, rollout["id"])
        counts = shown["counts"]
        return counts["SUCCEEDED"] >= 1 and (
            counts["UPDATING"] + counts["VERIFYING"] > 0
        )

    polling.until(in_flight, 60, "the first batch in flight")
    ((pid,),) = _query(
        dep,
        "SELECT s.pid FROM rollout r JOIN service s ON "
        "s.engine_id = r.engine_id AND s.epoch = r.epoch "
        "WHERE r.id = '%s'" % rollout["id"],
    )
    assert pid in dep.engine_pids()
    os.kill(pid, signal.SIGKILL)
    killed = time.time()
    done = _finished(dep, rollout["id"], timeout=150)
    print("\nROLLOUT after kill -9: %.1f s to finish" % (time.time() - killed))
    ((owner,),) = _query(
        dep,
        "SELECT s.pid FROM rollout r JOIN service s ON "
        "s.engine_id = r.engine_id AND s.epoch = r.epoch "
        "WHERE r.id = '%s'" % rollout["id"],
    )
    assert owner != pid
    _check_outcome(dep, heat, ids, before, done)
    _delete_all(heat, ids, dep)
