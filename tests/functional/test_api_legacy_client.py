"""The calls Horizon's Orchestration panels (heat-dashboard) make, as they
make them: python-heatclient's *legacy* client (``Client("1",
endpoint=..., token=...)``, no keystoneauth session), which sends the
token in a header, ``X-Auth-User``/``X-Auth-Key`` on create, update and
preview, follows 302 redirects itself with the same method and body, is
given bare stack UUIDs, and pages with ``limit``/``marker``.

The Launch Stack form validates the template before the user typed any
value: ``POST /validate`` answers 200 with the parameters described (as
Heat's non-strict validate), while create and preview still refuse a
missing value.
"""

import uuid

import pytest
import requests
import yaml
from heatclient import client as heat_client

from harness import helpers

error = helpers.http_error

# What a Launch Stack form is built from: a required parameter, a hidden
# one, a choice, a drop-down of the cloud (custom constraint), a group.
LAUNCH = helpers.template(
    {
        "a": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "word"}},
        },
        "b": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "size"}},
            "depends_on": "a",
            "metadata": {"launched": "from horizon"},
        },
    },
    outputs={
        "out": {
            "description": "a's output",
            "value": {"get_attr": ["a", "output"]},
        }
    },
    description="A launch form",
    parameters={
        "word": {
            "type": "string",
            "label": "Word",
            "description": "Any word",
            "constraints": [{"length": {"min": 2}}],
        },
        "secret": {"type": "string", "hidden": True},
        "size": {
            "type": "string",
            "default": "small",
            "constraints": [{"allowed_values": ["small", "large"]}],
        },
        "image": {
            "type": "string",
            "default": "any",
            "constraints": [{"custom_constraint": "glance.image"}],
        },
    },
    # Horizon shows only the parameters of the groups, in their order.
    parameter_groups=[
        {"label": "Main", "description": "d", "parameters": ["word", "size"]},
        {"label": "Cloud", "parameters": ["image", "secret"]},
    ],
)


def legacy(deployment, project, **kwargs):
    """The client heat-dashboard makes (``heat_dashboard.api.heat``)."""
    return heat_client.Client(
        "1", deployment.endpoint(project), token=uuid.uuid4().hex, **kwargs
    )


@pytest.fixture
def project(deployment):
    """A fresh project per test (lists are exact), emptied afterwards."""
    name = "p" + uuid.uuid4().hex[:10]
    yield name
    helpers.delete_all(deployment.client(name))


def test_validate_before_any_value(deployment, project):
    heat = legacy(deployment, project)
    doc = heat.stacks.validate(template=LAUNCH, files={})
    assert doc["Description"] == "A launch form"
    assert doc["Parameters"]["word"] == {
        "Type": "String",
        "Description": "Any word",
        "NoEcho": "false",
        "Label": "Word",
        "MinLength": 2,
    }
    assert doc["Parameters"]["secret"]["NoEcho"] == "true"
    assert doc["Parameters"]["secret"]["Label"] == "secret"
    assert doc["Parameters"]["size"]["AllowedValues"] == ["small", "large"]
    assert doc["Parameters"]["size"]["Default"] == "small"
    assert doc["Parameters"]["image"]["CustomConstraint"] == "glance.image"
    assert doc["ParameterGroups"] == LAUNCH["parameter_groups"]
    assert doc["Environment"]["parameters"] == {}
    # The session client (``openstack stack``) gets the same document.
    assert deployment.client(project).stacks.validate(template=LAUNCH) == doc
    # Horizon sends the environment as the YAML text the user typed; as
    # Heat's validate, a value that does not fit is shown, not refused.
    env = yaml.safe_dump({"parameters": {"word": "x", "size": "huge"}})
    doc = heat.stacks.validate(template=LAUNCH, environment=env)
    assert doc["Parameters"]["word"]["Value"] == "x"
    assert doc["Parameters"]["size"]["Value"] == "huge"
    # A value for a parameter the template lacks is still an error.
    refused = error(
        lambda: heat.stacks.validate(
            template=LAUNCH, environment={"parameters": {"nope": 1}}
        )
    )
    assert refused.code == 400 and "nope" in str(refused)
    # A template that is wrong is still refused with no values given.
    broken = dict(LAUNCH, resources={"a": {"type": "No::Such::Type"}})
    assert error(lambda: heat.stacks.validate(template=broken)).code == 400


def test_validate_query_parameters(deployment, project):
    url = deployment.endpoint(project) + "/validate"
    body = {"template": LAUNCH}
    for query in ("show_nested=true", "ignore_errors=99001", ""):
        answer = requests.post(url + "?" + query, json=body)
        assert answer.status_code == 200, (query, answer.text)
        assert set(answer.json()["Parameters"]) == set(LAUNCH["parameters"])
    answer = requests.post(url + "?ignore_errors=99001,12345", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        "Invalid codes in ignore_errors : ['12345']"
    )


def test_create_and_preview_still_need_values(deployment, project):
    heat = legacy(deployment, project, username="demo", password="secret")
    for call in (heat.stacks.create, heat.stacks.preview):
        refused = error(lambda c=call: c(stack_name="s", template=LAUNCH))
        assert refused.code == 400
        assert "UserParameterMissing" in str(refused) or "word" in str(refused)
    # A value that does not fit is refused by create, unlike validate.
    refused = error(
        lambda: heat.stacks.create(
            stack_name="s",
            template=LAUNCH,
            parameters={"word": "ok", "secret": "s", "size": "huge"},
        )
    )
    assert refused.code == 400 and "size" in str(refused)


PATHS = (
    "",
    "/resources",
    "/resources/a",
    "/resources/a/metadata",
    "/resources/a/events",
    "/resources/a/signal",
    "/events",
    "/template",
    "/environment",
    "/files",
    "/outputs",
    "/outputs/out",
    "/actions",
    "/snapshots",
    "/preview",
    "/abandon",
    "/export",
)


def _launched(deployment, project, name):
    """(legacy client with credentials, id of a stack of LAUNCH)."""
    heat = legacy(deployment, project, username="demo", password="secret")
    body = heat.stacks.create(
        stack_name=name,
        template=LAUNCH,
        parameters={"word": "hello", "secret": "s"},
    )
    return heat, body["stack"]["id"]


def test_lookup_redirects_every_method(deployment, project):
    """Every method on a stack's name or bare UUID, and on each of its
    sub-collections, is redirected to the canonical URL: absolute (the
    legacy client prepends nothing to it) with the query kept."""
    heat, stack_id = _launched(deployment, project, "look")
    base = deployment.endpoint(project) + "/stacks/"
    canonical = base + "look/" + stack_id
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        for key in ("look", stack_id):
            for path in PATHS:
                answer = requests.request(
                    method,
                    base + key + path + "?sort_dir=asc&x=%C3%A9",
                    allow_redirects=False,
                )
                where = (method, key, path, answer.status_code)
                assert answer.status_code == 302, where
                assert answer.headers["Location"] == (
                    canonical + path + "?sort_dir=asc&x=%C3%A9"
                ), where
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")


def test_horizon_calls_by_bare_uuid(deployment, project):
    """What the stack detail page, its tabs and the row actions call,
    each with the stack's UUID alone, through the legacy client."""
    heat, stack_id = _launched(deployment, project, "bare")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get(stack_id)
    # The legacy client's X-Auth-User reached the service on create.
    assert stack.stack_owner == "demo"
    assert stack.parameters["secret"] == "******"
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == {
        "out": "hello"
    }
    assert heat.stacks.template(stack_id) == LAUNCH
    resources = {r.resource_name: r for r in heat.resources.list(stack_id)}
    # The topology draws its edges from required_by.
    assert resources["a"].required_by == ["b"]
    assert resources["b"].required_by == []
    assert heat.resources.get(stack_id, "a").resource_type == (
        "OS::Heat::TestResource"
    )
    assert heat.resources.metadata(stack_id, "a") == {}
    preview = heat.stacks.preview(
        stack_name="bare2",
        template=LAUNCH,
        parameters={"word": "hi", "secret": "s"},
    )
    assert {r["resource_name"] for r in preview.resources} == {"a", "b"}
    for action, state in (
        (heat.actions.check, "CHECK_COMPLETE"),
        (heat.actions.suspend, "SUSPEND_COMPLETE"),
        (heat.actions.resume, "RESUME_COMPLETE"),
    ):
        action(stack_id)
        helpers.wait_for_status(heat, stack_id, state)
    heat.stacks.update(
        stack_id,
        template=LAUNCH,
        parameters={"word": "changed", "secret": "s"},
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.stacks.output_show(stack_id, "out")["output"][
        "output_value"
    ] == ("changed")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def _page(heat, marker, size, **kwargs):
    """heat_dashboard.api.heat.stacks_list(paginate=True): one more than
    the page to learn whether there is a next one."""
    found = list(
        heat.stacks.list(
            limit=size + 1, sort_key="created_at", marker=marker, **kwargs
        )
    )
    return found[:size], len(found) > size


def test_stacks_and_events_paging(deployment, project):
    heat = legacy(deployment, project)
    ids = [helpers.create(heat, "s%d" % i, helpers.flat(2)) for i in range(5)]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    seen, marker, more = [], None, True
    while more:
        page, more = _page(heat, marker, 2, sort_dir="desc")
        seen += [s.id for s in page]
        marker = page[-1].id
    assert seen == ids[::-1]
    # Past the last one: an empty page, not an error.
    assert list(heat.stacks.list(limit=3, marker=ids[0])) == []
    assert list(heat.stacks.list(limit=3, marker=ids[-1], sort_dir="asc")) == (
        []
    )
    # The list's filters (Horizon's status filter is upper case).
    done = heat.stacks.list(limit=10, status="CREATE_COMPLETE", name="s3")
    assert [s.id for s in done] == [ids[3]]
    # The events tab: newest first, paged by marker, ending in [].
    events, marker = [], None
    while True:
        kwargs = {"marker": marker} if marker else {}
        page = list(
            heat.events.list(
                ids[0],
                limit=3,
                sort_dir="desc",
                sort_key="event_time",
                **kwargs,
            )
        )
        if not page:
            break
        events += page
        marker = page[-1].id
    assert len(events) == len({e.id for e in events}) >= 6
    assert events[0].resource_status_reason.startswith("Stack CREATE")
