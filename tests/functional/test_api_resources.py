"""Resource and event routes through python-heatclient: list filters and
detail, show with attributes, metadata, signal, mark (un)healthy, events
with paging, sorting, filters, nested_depth and event show."""

import uuid

import pytest
import requests

from harness import helpers
from tests.functional.test_api_stacks import delete_all

error = helpers.http_error

TMPL = helpers.template(
    {
        "a": {
            "type": "OS::Heat::TestResource",
            "description": "the first",
            "properties": {"value": "va"},
        },
        "b": {
            "type": "OS::Heat::None",
            "depends_on": "a",
            "metadata": {"ref": {"get_resource": "a"}, "n": 1},
        },
    }
)


@pytest.fixture
def stack(deployment):
    project = "r" + uuid.uuid4().hex[:10]
    heat = deployment.client(project)
    stack_id = helpers.create(heat, "res", TMPL)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    yield (
        heat,
        stack_id,
        "%s/stacks/res/%s" % (deployment.endpoint(project), stack_id),
    )
    delete_all(heat)


def test_resource_list_and_show(stack):
    heat, stack_id, url = stack
    names = {r.resource_name for r in heat.resources.list(stack_id)}
    assert names == {"a", "b"}
    detailed = {
        r.resource_name: r
        for r in heat.resources.list(
            stack_id, with_detail=True, nested_depth=2
        )
    }
    assert detailed["a"].description == "the first"
    assert detailed["a"].attributes == {"output": "va"}
    only = heat.resources.list(stack_id, filters={"type": "OS::Heat::None"})
    assert [r.resource_name for r in only] == ["b"]
    only = heat.resources.list(stack_id, filters={"name": ["a", "x"]})
    assert [r.resource_name for r in only] == ["a"]
    assert (
        len(
            heat.resources.list(
                stack_id, filters={"status": "CREATE_COMPLETE"}
            )
        )
        == 2
    )
    assert (
        len(heat.resources.list(stack_id, filters={"action": "UPDATE"})) == 0
    )
    response = requests.get(url + "/resources", params={"bogus": "1"})
    assert response.status_code == 400
    assert "Invalid filter parameters" in response.json()["error"]["message"]
    res = heat.resources.get(stack_id, "a", with_attr=["output"])
    assert res.attributes["output"] == "va"
    assert res.required_by == ["b"]
    assert res.stack_name == "res"
    assert {link["rel"] for link in res.links} == {"self", "stack"}
    exc = error(lambda: heat.resources.get(stack_id, "zzz"))
    assert exc.code == 404 and "zzz" in str(exc)


def test_metadata_signal_and_mark_unhealthy(stack):
    heat, stack_id, url = stack
    a = heat.resources.get(stack_id, "a")
    assert heat.resources.metadata(stack_id, "b") == {
        "ref": a.physical_resource_id,
        "n": 1,
    }
    assert heat.resources.metadata(stack_id, "a") == {}
    exc = error(lambda: heat.resources.signal(stack_id, "a", data={"x": 1}))
    assert exc.code == 400
    assert exc.error["error"]["type"] == "ResourceActionNotSupported"
    assert "Signal is not supported for resource." in str(exc)

    heat.resources.mark_unhealthy(stack_id, "a", True, "broken")
    a = heat.resources.get(stack_id, "a")
    assert a.resource_status == "CHECK_FAILED"
    assert a.resource_status_reason == "broken"
    events = list(heat.events.list(stack_id, resource_name="a"))
    assert events[-1].resource_status == "CHECK_FAILED"
    heat.resources.mark_unhealthy(
        stack_id, a.physical_resource_id, False, "fixed"
    )
    assert (
        heat.resources.get(stack_id, "a").resource_status == "CHECK_COMPLETE"
    )
    for body in (
        {},
        {"mark_unhealthy": "maybe"},
        {"mark_unhealthy": True, "other": 1},
    ):
        response = requests.patch(url + "/resources/a", json=body)
        assert response.status_code == 400, body
    # An unhealthy resource is replaced by the next update.
    heat.resources.mark_unhealthy(stack_id, "a", True, "again")
    old = heat.resources.get(stack_id, "a").physical_resource_id
    heat.stacks.update(stack_id, template=TMPL)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "a").physical_resource_id != old


def test_events(stack):
    heat, stack_id, url = stack
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    assert events[0].resource_status_reason == "Stack CREATE started"
    newest = list(heat.events.list(stack_id, sort_dir="desc", limit=1))
    assert newest[0].id == events[-1].id
    after = list(
        heat.events.list(stack_id, sort_dir="asc", marker=events[1].id)
    )
    assert [e.id for e in after] == [e.id for e in events[2:]]
    by_type = list(
        heat.events.list(stack_id, sort_keys="resource_type", sort_dir="asc")
    )
    types = [e.links for e in by_type]
    assert len(types) == len(events)
    done = list(
        heat.events.list(
            stack_id,
            filters={"resource_status": "COMPLETE", "resource_name": "a"},
        )
    )
    assert [e.resource_status for e in done] == ["CREATE_COMPLETE"]
    nested = list(heat.events.list(stack_id, nested_depth=1))
    assert all(
        any(link["rel"] == "root_stack" for link in e.links) for e in nested
    )
    assert not any(link["rel"] == "root_stack" for link in events[0].links)
    a_events = list(heat.events.list(stack_id, resource_name="a"))
    assert {e.resource_name for e in a_events} == {"a"}
    one = heat.events.get(stack_id, "a", a_events[0].id)
    assert one.resource_type == "OS::Heat::TestResource"
    assert one.id == a_events[0].id
    exc = error(lambda: heat.events.get(stack_id, "b", a_events[0].id))
    assert exc.code == 404
    exc = error(lambda: heat.events.list(stack_id, resource_name="zz"))
    assert exc.code == 404 and "No events found for resource zz" in str(exc)
    response = requests.get(url + "/events", params={"marker": "nope"})
    assert response.status_code == 404
