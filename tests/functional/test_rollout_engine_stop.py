"""Stopping an engine (SIGTERM) that runs a rollout is an ordinary event:
the engine logs no ERROR, and the rollout is taken over as it was --
a paused one stays paused until resumed, a rollback under way is
finished by the next owner. On PostgreSQL + RabbitMQ, an API and two
engine processes, the engine stopped by its signal as an operator (or
systemd) stops it."""

import copy
import os
import signal

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.functional.test_chaos_engines import _query
from tests.unit.engine.test_rollouts import NEW, OLD, app_template

HEADERS = {"X-Auth-User": "tester"}
COUNT = 3
VERIFY = {
    "timeout": 2,
    "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
}


@pytest.fixture
def dep(tmp_path):
    yield from deployment_mod.running("postgresql", tmp_path)


def _slow_template():
    """The application, its ``app`` taking 3 s to update (a revert
    stays under way long enough to stop its engine in the middle)."""
    template = copy.deepcopy(app_template())
    template["resources"]["app"]["properties"]["action_wait_secs"] = {
        "update": 3
    }
    return template


def _apps(heat, prefix, template):
    ids = [
        helpers.create(heat, "%s-%d" % (prefix, i), template)
        for i in range(COUNT)
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def _api(dep, method, path, body=None):
    response = requests.request(
        method,
        dep.endpoint() + "/rollouts" + path,
        json=body,
        headers=HEADERS,
        timeout=60,
    )
    assert response.status_code in (200, 201), response.text
    return response.json()["rollout"]


def _create(dep, prefix):
    return _api(
        dep,
        "POST",
        "",
        {
            "name": prefix,
            "selector": {"stack_name": prefix + "-*"},
            "update": {"parameters": {"php_version": NEW}},
            "verify": VERIFY,
            "strategy": {"canary": 1, "batch_size": 1},
        },
    )


def _owner(dep, rollout_id):
    """The pid of the engine process that owns the rollout (None when
    no live engine does)."""
    rows = _query(
        dep,
        "SELECT s.pid FROM rollout r JOIN service s ON "
        "s.engine_id = r.engine_id AND s.epoch = r.epoch "
        "WHERE r.id = '%s'" % rollout_id,
    )
    return rows[0][0] if rows else None


def _stop(dep, pid):
    """SIGTERM the engine process ``pid``; wait until it is gone and
    its successor (the supervisor restarts it) is up."""
    os.kill(pid, signal.SIGTERM)
    polling.until(
        lambda: pid not in dep.engine_pids(), 60, "engine %d exited" % pid
    )
    polling.until(
        lambda: len(dep.engine_pids()) == 2 and dep.engines_up() >= 2,
        120,
        "two engines up again",
    )


def _new_owner(dep, rollout_id, old):
    def owned():
        pid = _owner(dep, rollout_id)
        return pid if pid is not None and pid != old else None

    return polling.until(owned, 90, "rollout %s taken over" % rollout_id)


def _paused_at_a_gate(dep, rollout_id):
    """The counts of a paused rollout once no target is in flight (its
    flow waits at its next gate)."""

    def settled():
        counts = _api(dep, "GET", "/" + rollout_id)["counts"]
        in_flight = counts["UPDATING"] + counts["VERIFYING"]
        return counts if in_flight == 0 else None

    return polling.until(settled, 90, "no target in flight")


def _errors(dep, log="engine"):
    """The log's ERROR (and traceback) lines."""
    return [
        line
        for line in dep.log(log).splitlines()
        if " ERROR " in line or " CRITICAL " in line or "Traceback" in line
    ]


@pytest.mark.timeout(400)
def test_stopping_the_engine_of_a_paused_rollout(dep):
    heat = dep.client()
    _apps(heat, "paused", app_template())
    rollout = _create(dep, "paused")
    paused = _api(dep, "POST", "/%s/actions" % rollout["id"], {"pause": None})
    assert paused["status"] == "PAUSED"

    counts = _paused_at_a_gate(dep, rollout["id"])
    pid = _owner(dep, rollout["id"])
    assert pid in dep.engine_pids()
    _stop(dep, pid)
    assert _new_owner(dep, rollout["id"], pid) != pid
    shown = _api(dep, "GET", "/" + rollout["id"])
    assert shown["status"] == "PAUSED", shown["status_reason"]
    assert shown["counts"] == counts
    assert counts["PENDING"] >= COUNT - 1
    assert _errors(dep) == []
    # Resumed, the new owner carries on.
    _api(dep, "POST", "/%s/actions" % rollout["id"], {"resume": None})

    def done():
        shown = _api(dep, "GET", "/" + rollout["id"])
        return shown if shown["status"] != "IN_PROGRESS" else None

    finished = polling.until(done, 120, "the rollout finished")
    assert finished["status"] == "COMPLETE", finished["status_reason"]
    assert finished["counts"]["SUCCEEDED"] == COUNT
    assert _errors(dep) == []


@pytest.mark.timeout(400)
def test_stopping_the_engine_of_a_rollback_under_way(dep):
    heat = dep.client()
    ids = _apps(heat, "revert", _slow_template())
    rollout = _create(dep, "revert")

    def finished():
        shown = _api(dep, "GET", "/" + rollout["id"])
        return shown if shown["finished_at"] else None

    assert polling.until(finished, 150, "rollout done")["status"] == (
        "COMPLETE"
    )
    _api(dep, "POST", "/%s/actions" % rollout["id"], {"rollback": None})

    def reverting():
        shown = _api(dep, "GET", "/" + rollout["id"])
        return shown["counts"]["ROLLING_BACK"] > 0

    polling.until(reverting, 60, "a target rolling back")
    pid = _owner(dep, rollout["id"])
    assert pid in dep.engine_pids()
    _stop(dep, pid)
    rolled_back = polling.until(
        finished,
        180,
        lambda: (
            "rollback done; the engines' log:\n%s" % dep.log("engine")[-12000:]
        ),
    )
    assert rolled_back["status"] == "CANCELLED", rolled_back["status_reason"]
    assert rolled_back["counts"]["ROLLED_BACK"] == COUNT
    for stack_id in ids:
        stack = heat.stacks.get(stack_id)
        assert stack.parameters["php_version"] == OLD
    assert _errors(dep) == []


@pytest.mark.timeout(300)
def test_stopping_heat_lite_all_with_a_paused_rollout(tmp_path):
    """``heat-lite-all`` stopped (SIGTERM) with a paused rollout logs no
    ERROR; started again, it resumes the rollout, still paused."""
    dep = deployment_mod.Deployment("sqlite", tmp_path).start()
    try:
        heat = dep.client()
        _apps(heat, "alone", app_template())
        rollout = _create(dep, "alone")
        _api(dep, "POST", "/%s/actions" % rollout["id"], {"pause": None})
        counts = _paused_at_a_gate(dep, rollout["id"])
        all_in_one = dep.procs["all"]
        os.killpg(all_in_one.pid, signal.SIGTERM)
        assert all_in_one.wait(timeout=60) == 0
        assert _errors(dep, "all") == []
        dep._spawn("all", "heat-lite-all")
        dep._wait_for_api()
        polling.until(
            lambda: _owner(dep, rollout["id"]) is not None,
            60,
            "the rollout resumed",
        )
        shown = _api(dep, "GET", "/" + rollout["id"])
        assert shown["status"] == "PAUSED", shown["status_reason"]
        assert shown["counts"] == counts
        assert _errors(dep, "all") == []
    finally:
        dep.stop()
