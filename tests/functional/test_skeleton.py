"""The whole path API → RPC → engine → SQL with the real heatclient."""

import requests
from heatclient import exc as heat_exc

from harness import helpers

error = helpers.http_error

THREE = helpers.template(
    {
        "a": {"type": "OS::Heat::None"},
        "b": {
            "type": "OS::Heat::None",
            "depends_on": "a",
            "properties": {"ref": {"get_resource": "a"}},
        },
        "c": {"type": "OS::Heat::None", "depends_on": ["b"]},
    },
    outputs={
        "a_id": {"value": {"get_resource": "a"}, "description": "the id of a"}
    },
)


def _names_in_event_order(events, status):
    return [e.resource_name for e in events if e.resource_status == status]


def test_create_list_show_delete(deployment, heat):
    stack_id = helpers.create(heat, "skeleton", THREE)
    stack = heat.stacks.get(stack_id)
    assert stack.stack_status in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    stack = helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    resources = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(resources) == {"a", "b", "c"}
    assert all(
        r.resource_status == "CREATE_COMPLETE" for r in resources.values()
    )
    assert resources["a"].required_by == ["b"]

    shown = heat.stacks.get("skeleton")
    assert shown.id == stack_id
    assert (
        shown.outputs[0]["output_value"] == resources["a"].physical_resource_id
    )
    assert shown.parameters["OS::stack_name"] == "skeleton"

    events = list(heat.events.list(stack_id, sort_dir="asc"))
    completed = _names_in_event_order(events, "CREATE_COMPLETE")
    assert completed == ["a", "b", "c", "skeleton"]
    assert events[0].resource_status_reason == "Stack CREATE started"

    listed = [s.stack_name for s in heat.stacks.list()]
    assert "skeleton" in listed

    heat.stacks.delete(stack_id)
    assert heat.stacks.get(stack_id).stack_status in (
        "DELETE_IN_PROGRESS",
        "DELETE_COMPLETE",
    )
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    deleted = heat.stacks.get(stack_id)
    assert deleted.stack_status == "DELETE_COMPLETE"
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    assert _names_in_event_order(events, "DELETE_COMPLETE") == [
        "c",
        "b",
        "a",
        "skeleton",
    ]
    try:
        heat.stacks.get("skeleton")
        raise AssertionError("a deleted stack is found by name")
    except heat_exc.HTTPNotFound:
        pass


def test_chain_and_fan_out(deployment, heat):
    resources = helpers.chain(15)["resources"]
    for i in range(15):
        resources["f%d" % i] = {"type": "OS::Heat::None", "depends_on": "r0"}
    stack_id = helpers.create(heat, "wide", helpers.template(resources))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    order = _names_in_event_order(events, "CREATE_COMPLETE")
    assert order.index("r0") < min(order.index("f%d" % i) for i in range(15))
    assert [n for n in order if n.startswith("r")] == [
        "r%d" % i for i in range(15)
    ]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_errors_are_heat_json(deployment, heat):
    exc = error(lambda: heat.stacks.get("no-such-stack"))
    assert exc.code == 404
    exc = error(lambda: heat.stacks.create(stack_name="x"))
    assert exc.code == 400 and "No template specified" in str(exc)

    stack_id = helpers.create(heat, "dup", helpers.flat(1))
    exc = error(lambda: helpers.create(heat, "dup", helpers.flat(1)))
    assert exc.code == 409 and "already exists" in str(exc)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    bad = {
        "heat_template_version": "2018-08-31",
        "resources": {"a": {"type": "No::Such::Type"}},
    }
    exc = error(lambda: helpers.create(heat, "bad", bad))
    assert exc.code == 400 and "resources.a" in str(exc)
    cycle = helpers.template(
        {
            "a": {"type": "OS::Heat::None", "depends_on": "b"},
            "b": {"type": "OS::Heat::None", "depends_on": "a"},
        }
    )
    exc = error(lambda: helpers.create(heat, "cycle", cycle))
    assert exc.code == 400 and "Circular Dependency" in str(exc)
    exc = error(lambda: helpers.create(heat, "noversion", {"resources": {}}))
    assert exc.code == 400
    exc = error(lambda: helpers.create(heat, "9bad-name", helpers.flat(1)))
    assert exc.code == 400

    url = deployment.endpoint() + "/stacks"
    response = requests.post(
        url, data="{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"]["type"] == "BadRequest"
    assert body["code"] == 400 and body["title"] == "Bad Request"
    response = requests.delete(url)
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST"
    assert response.headers["Content-Type"].startswith("application/json")
    response = requests.get(deployment.url + "/nowhere")
    assert response.status_code == 404 and "error" in response.json()
    response = requests.get(deployment.url + "/")
    assert response.status_code == 300
    assert response.json()["versions"][0]["id"] == "v1.0"


def test_tenants_do_not_see_each_other(deployment):
    alice, bob = deployment.client("alice"), deployment.client("bob")
    stack_id = helpers.create(alice, "private", helpers.flat(2))
    helpers.wait_for_status(alice, stack_id, "CREATE_COMPLETE")
    assert [s.stack_name for s in bob.stacks.list()] == []
    for call in (
        lambda: bob.stacks.get(stack_id),
        lambda: bob.stacks.get("private"),
        lambda: bob.resources.list(stack_id),
        lambda: bob.events.list(stack_id),
        lambda: bob.stacks.delete(stack_id),
    ):
        assert error(call).code == 404
    # Same name in another project is fine.
    other = helpers.create(bob, "private", helpers.flat(1))
    helpers.wait_for_status(bob, other, "CREATE_COMPLETE")
    assert alice.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"
