"""A rollout whose ``update.parameters`` some target's template refuses
is refused at its creation (400 in Heat's error format, naming the
target and the parameter), and nothing is stored -- on a real API
(``heat-lite-all``, SQLite)."""

import copy

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers
from tests.unit.engine.test_rollouts import NEW, OLD, app_template

HEADERS = {"X-Auth-User": "tester"}
VERIFY = {
    "timeout": 2,
    "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
}


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("rollout-refusals")
    )


def _strict_template():
    """The application, its version limited to the 5.4 series."""
    template = copy.deepcopy(app_template())
    template["parameters"]["php_version"]["constraints"] = [
        {"allowed_pattern": r"5\.4\.[0-9]+"}
    ]
    return template


@pytest.fixture(scope="module")
def apps(dep):
    heat = dep.client()
    ids = {
        "fleet-loose": helpers.create(heat, "fleet-loose", app_template()),
        "fleet-strict": helpers.create(
            heat, "fleet-strict", _strict_template()
        ),
    }
    for stack_id in ids.values():
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def _create(dep, parameters):
    return requests.post(
        dep.endpoint() + "/rollouts",
        json={
            "name": "upgrade",
            "selector": {"stack_name": "fleet-*"},
            "update": {"parameters": parameters},
            "verify": VERIFY,
        },
        headers=HEADERS,
        timeout=60,
    )


def _rollouts(dep):
    response = requests.get(
        dep.endpoint() + "/rollouts", headers=HEADERS, timeout=60
    )
    assert response.status_code == 200, response.text
    return response.json()["rollouts"]


def _refusal(response):
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == 400
    assert body["title"] == "Bad Request"
    assert body["error"]["type"] == "InvalidRollout"
    return body["error"]["message"]


@pytest.mark.timeout(300)
def test_unknown_parameter_is_refused(dep, apps):
    message = _refusal(_create(dep, {"php_versoin": NEW}))
    assert "php_versoin" in message
    # Both templates refuse it: the first target checked is named.
    assert any(
        name in message and stack_id in message
        for name, stack_id in apps.items()
    ), message
    assert _rollouts(dep) == []


@pytest.mark.timeout(300)
def test_value_one_target_refuses_is_refused(dep, apps):
    message = _refusal(_create(dep, {"php_version": "7.0.1"}))
    assert "php_version" in message
    assert "fleet-strict" in message and apps["fleet-strict"] in message
    assert "fleet-loose" not in message
    assert _rollouts(dep) == []
    # Neither stack was touched.
    heat = dep.client()
    for stack_id in apps.values():
        stack = heat.stacks.get(stack_id)
        assert stack.stack_status == "CREATE_COMPLETE"
        assert stack.parameters["php_version"] == OLD


@pytest.mark.timeout(300)
def test_a_value_every_target_accepts_is_a_rollout(dep, apps):
    response = _create(dep, {"php_version": NEW})
    assert response.status_code == 201, response.text
    assert [r["name"] for r in _rollouts(dep)] == ["upgrade"]
    # The list pages (limit, marker of the last one seen); bad paging is
    # a 400 in Heat's format.
    made = response.json()["rollout"]["id"]
    url = dep.endpoint() + "/rollouts"
    page = requests.get(url + "?limit=1", headers=HEADERS, timeout=60)
    assert [r["id"] for r in page.json()["rollouts"]] == [made]
    after = requests.get(
        url + "?limit=1&marker=" + made, headers=HEADERS, timeout=60
    )
    assert after.status_code == 200, after.text
    assert after.json()["rollouts"] == []
    for query in ("?limit=x", "?marker=" + "0" * 36):
        refused = requests.get(url + query, headers=HEADERS, timeout=60)
        assert refused.status_code == 400, (query, refused.text)
        assert refused.json()["error"]["type"]
