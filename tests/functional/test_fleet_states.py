"""``GET /v1/states.json``: every state vocabulary, served to anyone (no
project's data in it), and the same states the OpenAPI document's
enums name -- one source for both (``common.states``)."""

import pytest
import requests

from harness import deployment as deployment_mod

KINDS = (
    "stack",
    "rollout",
    "rollout_target",
    "promotion",
    "verification",
    "snapshot",
    "image",
    "build",
    "traversal",
    "plan",
)


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("fleet-states")
    )


def test_served_to_anyone(dep):
    response = requests.get(dep.url + "/v1/states.json", timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    served = response.json()
    assert sorted(served) == sorted(KINDS)
    for kind in KINDS:
        vocabulary = served[kind]
        states = vocabulary["states"]
        assert states and sorted(vocabulary["transitions"]) == sorted(states)
        for after in vocabulary["transitions"].values():
            assert set(after) <= set(states), kind
        for members in vocabulary["groups"].values():
            assert set(members) <= set(states), kind
    assert served["rollout"]["groups"]["ACTIVE"] == ["IN_PROGRESS", "PAUSED"]
    assert "CREATE" in served["stack"]["actions"]


def test_the_openapi_enums_are_the_served_states(dep):
    served = requests.get(dep.url + "/v1/states.json", timeout=30).json()
    doc = requests.get(dep.url + "/v1/openapi.json", timeout=30).json()
    schemas = [
        op["responses"]["200"]["content"]["application/json"]["schema"]
        for op in (
            doc["paths"]["/v1/{tenant}/rollouts/{rollout_id}"]["get"],
            doc["paths"]["/v1/{tenant}/promotions/{promotion_id}"]["get"],
        )
    ]
    rollout = schemas[0]["properties"]["rollout"]["properties"]
    assert rollout["status"]["enum"] == served["rollout"]["states"]
    target = rollout["targets"]["items"]["properties"]["status"]
    assert target["enum"] == served["rollout_target"]["states"]
    promotion = schemas[1]["properties"]["promotion"]["properties"]
    assert promotion["status"]["enum"] == served["promotion"]["states"]
