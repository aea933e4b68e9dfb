"""Stack queries (``POST /v1/{project}/stacks/query``): every clause of a
selector, what matched, and tenant isolation."""

import uuid

import pytest
import requests

from harness import helpers

TR = "OS::Heat::TestResource"
TMPL = helpers.template(
    {
        "server": {
            "type": TR,
            "properties": {
                "value": {"list_join": ["-", ["php", {"get_param": "php"}]]}
            },
        },
        "cache": {"type": "OS::Heat::None"},
    },
    parameters={"php": {"type": "string", "default": "5.4.20"}},
)
# name: (tags, php parameter or None for the default)
STACKS = {
    "app-1": ("php,web", "5.4.10"),
    "app-2": ("php", "5.5.1"),
    "app-3": ("ruby", None),
    "other-1": ("php", "5.4.11"),
}


@pytest.fixture(scope="module")
def fleet(deployment):
    """Four stacks in a project of their own: (project, {name: id})."""
    project = "q" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    ids = {}
    for name, (tags, php) in STACKS.items():
        params = {"php": php} if php else {}
        ids[name] = helpers.create(
            heat, name, TMPL, tags=tags, parameters=params
        )
    for stack_id in ids.values():
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    yield project, ids
    for stack_id in ids.values():
        heat.stacks.delete(stack_id)
    for stack_id in ids.values():
        helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def _query(deployment, project, body, roles="member"):
    return requests.post(
        deployment.endpoint(project) + "/stacks/query",
        json=body,
        headers={"X-Auth-User": "tester", "X-Roles": roles},
        timeout=60,
    )


def _names(deployment, project, selector):
    response = _query(deployment, project, {"selector": selector})
    assert response.status_code == 200, response.text
    return {s["stack_name"]: s for s in response.json()["stacks"]}


def test_each_clause(deployment, fleet):
    project, ids = fleet
    found = _names(deployment, project, {"stack_name": "app-*"})
    assert sorted(found) == ["app-1", "app-2", "app-3"]
    assert found["app-1"]["id"] == ids["app-1"]
    assert found["app-1"]["stack_status"] == "CREATE_COMPLETE"
    assert found["app-1"]["matched"] == {"stack_name": "app-1"}

    found = _names(deployment, project, {"tags": ["php"]})
    assert sorted(found) == ["app-1", "app-2", "other-1"]
    assert found["app-1"]["matched"] == {"tags": ["php"]}
    assert sorted(_names(deployment, project, {"tags": ["php", "w*"]})) == [
        "app-1"
    ]

    found = _names(deployment, project, {"parameters": {"php": "5.4.*"}})
    assert sorted(found) == ["app-1", "app-3", "other-1"]
    assert found["app-3"]["matched"] == {"parameters": {"php": "5.4.20"}}

    found = _names(
        deployment,
        project,
        {"resources": [{"type": TR, "properties": {"value": "php-5.4*"}}]},
    )
    assert sorted(found) == ["app-1", "app-3", "other-1"]
    assert found["other-1"]["matched"] == {
        "resources": [
            {
                "name": "server",
                "type": TR,
                "properties": {"value": "php-5.4.11"},
            }
        ]
    }
    assert (
        _names(
            deployment,
            project,
            {"resources": [{"type": "OS::Nova::Server"}]},
        )
        == {}
    )

    found = _names(deployment, project, {"status": ["CREATE_COMPLETE"]})
    assert sorted(found) == sorted(STACKS)
    assert _names(deployment, project, {"status": ["UPDATE_COMPLETE"]}) == {}
    assert sorted(_names(deployment, project, {"status": ["*_COMPLETE"]})) == (
        sorted(STACKS)
    )


def test_all_clauses_must_hold(deployment, fleet):
    project, ids = fleet
    selector = {
        "stack_name": "app-*",
        "tags": ["php"],
        "parameters": {"php": "5.4.*"},
        "resources": [{"type": TR, "properties": {"value": "php-5.4*"}}],
        "status": ["CREATE_COMPLETE", "UPDATE_COMPLETE"],
    }
    found = _names(deployment, project, selector)
    assert list(found) == ["app-1"]
    assert found["app-1"]["matched"] == {
        "stack_name": "app-1",
        "tags": ["php"],
        "parameters": {"php": "5.4.10"},
        "resources": [
            {
                "name": "server",
                "type": TR,
                "properties": {"value": "php-5.4.10"},
            }
        ],
        "status": "CREATE_COMPLETE",
    }
    # After an update the resolved properties of the new records count.
    heat = deployment.client(project)
    heat.stacks.update(ids["app-1"], existing=True, parameters={"php": "5.6"})
    helpers.wait_for_status(heat, ids["app-1"], "UPDATE_COMPLETE")
    assert _names(deployment, project, selector) == {}
    selector["resources"][0]["properties"]["value"] = "php-5.6"
    selector["parameters"]["php"] = "5.6"
    assert list(_names(deployment, project, selector)) == ["app-1"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"selector": "app-*"},
        {"selector": {}},
        {"selector": {"colour": "red"}},
        {"selector": {"tags": "php"}},
        {"selector": {"parameters": {"php": 5}}},
        {"selector": {"resources": [{"kind": "x"}]}},
        {"selector": {"status": []}},
        {"selector": {"stack_name": "a"}, "all_projects": "yes"},
        {"selector": {"stack_name": "a"}, "extra": 1},
    ],
)
def test_malformed_query_is_400(deployment, body):
    response = _query(deployment, "demo", body)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == 400
    assert "error" in response.json()


def test_tenant_isolation(deployment, fleet):
    project, ids = fleet
    other = "b" + uuid.uuid4().hex[:8]
    assert _names(deployment, other, {"stack_name": "*"}) == {}
    response = _query(
        deployment,
        other,
        {"selector": {"stack_name": "*"}, "all_projects": True},
    )
    assert response.status_code == 403, response.text
    response = _query(
        deployment,
        other,
        {"selector": {"stack_name": "app-*"}, "all_projects": True},
        roles="admin",
    )
    assert response.status_code == 200, response.text
    mine = [s for s in response.json()["stacks"] if s["project"] == project]
    assert sorted(s["id"] for s in mine) == sorted(
        ids[n] for n in ("app-1", "app-2", "app-3")
    )
    # A reader may query.
    assert sorted(
        s["stack_name"]
        for s in _query(
            deployment, project, {"selector": {"tags": ["ruby"]}}, "reader"
        ).json()["stacks"]
    ) == ["app-3"]
