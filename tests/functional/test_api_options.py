"""Behaviour behind options and roles, on an all-in-one deployment
configured for it: abandon/export (``enable_stack_abandon``), hidden
stacks (``hidden_stack_tags``) and the policy defaults (a ``reader`` can
read and not change; a member changes only its own project)."""

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers

EXTRA = """
[DEFAULT]
enable_stack_abandon = true
hidden_stack_tags = hideme,secret
"""


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    d = deployment_mod.Deployment(
        "sqlite", tmp_path_factory.mktemp("opts"), extra_conf=EXTRA
    )
    d.start()
    yield d
    d.stop()


def test_export_and_abandon(dep):
    heat = dep.client("ab")
    tmpl = helpers.template(
        {
            "a": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "kept"},
            }
        }
    )
    stack_id = helpers.create(heat, "leaving", tmpl, tags="x")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    exported = heat.stacks.export(stack_id)
    assert exported["id"] == stack_id and exported["name"] == "leaving"
    assert exported["template"] == tmpl and exported["tags"] == ["x"]
    res = exported["resources"]["a"]
    assert res["resource_data"] == {"value": "kept"}
    assert res["status"] == "COMPLETE" and res["resource_id"]
    assert heat.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"
    data = heat.stacks.abandon(stack_id)
    assert data["resources"]["a"]["resource_id"] == res["resource_id"]
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_hidden_stacks(dep):
    heat = dep.client("hid")
    ids = [
        helpers.create(heat, "shown", helpers.flat(1)),
        helpers.create(heat, "hidden", helpers.flat(1), tags="secret"),
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert [s.stack_name for s in heat.stacks.list()] == ["shown"]
    assert sorted(
        s.stack_name for s in heat.stacks.list(show_hidden=True)
    ) == ["hidden", "shown"]
    url = dep.endpoint("hid") + "/stacks"
    assert (
        requests.get(url, params={"with_count": "true"}).json()["count"] == 1
    )


def test_reader_reads_and_does_not_write(dep):
    owner = dep.client("rd")
    stack_id = helpers.create(owner, "ro", helpers.flat(1))
    helpers.wait_for_status(owner, stack_id, "CREATE_COMPLETE")
    base = "%s/stacks/ro/%s" % (dep.endpoint("rd"), stack_id)
    reader = {"X-Roles": "reader", "X-Auth-User": "r"}
    member = {"X-Roles": "member,reader", "X-Auth-User": "m"}
    for path in ("", "/resources", "/events", "/template", "/outputs"):
        assert requests.get(base + path, headers=reader).status_code == 200
    for method, path, body in (
        ("DELETE", "", None),
        ("PATCH", "", {}),
        ("POST", "/actions", {"check": None}),
        ("PATCH", "/resources/r0", {"mark_unhealthy": True}),
    ):
        response = requests.request(
            method, base + path, json=body, headers=reader
        )
        assert response.status_code == 403, (method, path)
        assert response.json()["error"]["type"] == "Forbidden"
    response = requests.post(
        dep.endpoint("rd") + "/stacks",
        headers=reader,
        json={"stack_name": "no", "template": helpers.flat(1)},
    )
    assert response.status_code == 403
    response = requests.post(
        base + "/actions", json={"check": None}, headers=member
    )
    assert response.status_code == 200
    helpers.wait_for_status(owner, stack_id, "CHECK_COMPLETE")
