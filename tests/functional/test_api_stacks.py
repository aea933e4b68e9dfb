"""Stack routes through the real python-heatclient and raw HTTP: list
parameters, lookup redirects, show, template/environment/files, outputs,
previews, snapshots and the abandon/adopt gates."""

import uuid

import pytest
import requests

from harness import helpers

error = helpers.http_error

OUTPUTS = helpers.template(
    {
        "a": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "word"}},
        },
        "b": {"type": "OS::Heat::None", "metadata": {"k": "v"}},
    },
    outputs={
        "val": {
            "value": {"get_attr": ["a", "output"]},
            "description": "a's value",
        },
        "bad": {"value": {"get_attr": ["a", "output", "x", "y"]}},
    },
    parameters={
        "word": {"type": "string", "default": "hello"},
        "secret": {"type": "string", "hidden": True, "default": "s3cret"},
    },
)


def delete_all(heat):
    """Delete every stack of a project: the shared deployments' ledger
    must show no leaked TestResource."""
    ids = [s.id for s in heat.stacks.list()]
    for stack_id in ids:
        heat.stacks.delete(stack_id)
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


@pytest.fixture
def project(deployment):
    """A fresh project per test, so that lists are exact."""
    name = "p" + uuid.uuid4().hex[:10]
    heat = deployment.client(name)
    yield name, heat
    delete_all(heat)


def test_list_paging_sorting_and_count(deployment, project):
    name, heat = project
    ids = [
        helpers.create(
            heat, "s%d" % i, helpers.flat(1), tags="t%d,all" % (i % 2)
        )
        for i in range(5)
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    url = deployment.endpoint(name) + "/stacks"
    page = requests.get(
        url,
        params={
            "limit": 2,
            "sort_keys": "stack_name",
            "sort_dir": "asc",
            "with_count": "true",
        },
    ).json()
    assert [s["stack_name"] for s in page["stacks"]] == ["s0", "s1"]
    assert page["count"] == 5
    nxt = page["links"][0]
    assert nxt["rel"] == "next" and "marker=%s" % ids[1] in nxt["href"]
    page2 = requests.get(nxt["href"]).json()
    assert [s["stack_name"] for s in page2["stacks"]] == ["s2", "s3"]
    every = requests.get(url, params={"limit": 10}).json()
    assert "links" not in every and len(every["stacks"]) == 5
    # heatclient pages by itself with limit and marker.
    assert len(list(heat.stacks.list(limit=3))) == 3
    assert [
        s.stack_name
        for s in heat.stacks.list(sort_keys="stack_name", sort_dir="desc")
    ][0] == "s4"

    def names(**params):
        return sorted(s.stack_name for s in heat.stacks.list(**params))

    assert names(tags="t1") == ["s1", "s3"]
    assert names(tags="t1,all") == ["s1", "s3"]
    assert names(tags_any="t0,t1") == ["s0", "s1", "s2", "s3", "s4"]
    assert names(not_tags="t0,all") == ["s1", "s3"]
    assert names(not_tags_any="t1") == ["s0", "s2", "s4"]
    assert names(filters={"name": ["s1", "s2"]}) == ["s1", "s2"]
    assert names(filters={"status": "CREATE_COMPLETE"}) == names()
    assert names(filters={"status": "UPDATE_COMPLETE"}) == []
    assert names(filters={"status": "COMPLETE"}) == names()
    bad = requests.get(url, params={"show_deleted": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"]["message"]
    assert requests.get(url, params={"limit": "x"}).status_code == 400
    assert requests.get(url, params={"sort_dir": "up"}).status_code == 400
    detail = requests.get(url + "/detail").json()
    assert len(detail["stacks"]) == 5


def test_show_deleted_and_global_tenant(deployment, project):
    name, heat = project
    gone = helpers.create(heat, "gone", helpers.flat(1))
    helpers.wait_for_status(heat, gone, "CREATE_COMPLETE")
    # A template without outputs: an empty list (as Heat), until deleted.
    assert heat.stacks.get(gone).to_dict()["outputs"] == []
    heat.stacks.delete(gone)
    helpers.wait_for_status(heat, gone, "DELETE_COMPLETE")
    assert [s.stack_name for s in heat.stacks.list()] == []
    shown = list(heat.stacks.list(show_deleted=True))
    assert [s.stack_status for s in shown] == ["DELETE_COMPLETE"]
    assert "outputs" not in heat.stacks.get(gone).to_dict()
    url = deployment.endpoint(name) + "/stacks"
    # noauth callers without X-Roles are admins: they may see every
    # project's stacks, each with its project.
    mine = requests.get(
        url, params={"global_tenant": "true", "show_deleted": "true"}
    ).json()
    assert any(s["project"] == name for s in mine["stacks"])
    member = requests.get(
        url, params={"global_tenant": "true"}, headers={"X-Roles": "member"}
    )
    assert member.status_code == 403
    assert member.json()["error"]["type"] == "Forbidden"
    plain = requests.get(url, headers={"X-Roles": "member"}).json()
    assert all("project" not in s for s in plain["stacks"])


def test_lookup_redirects_keep_the_query(deployment, project):
    name, heat = project
    stack_id = helpers.create(heat, "look", OUTPUTS)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    base = deployment.endpoint(name) + "/stacks"
    canonical = "%s/look/%s" % (base, stack_id)
    for path, query, expected in (
        (
            "/look",
            "resolve_outputs=false",
            canonical + "?resolve_outputs=false",
        ),
        ("/" + stack_id, "", canonical),
        (
            "/look/resources",
            "with_detail=true",
            canonical + "/resources?with_detail=true",
        ),
        ("/look/resources/a/events", "", canonical + "/resources/a/events"),
        ("/look/outputs/val", "", canonical + "/outputs/val"),
        (
            "/arn:openstack:heat::%s:stacks/look/%s" % (name, stack_id),
            "",
            canonical,
        ),
        (
            "/arn%%3Aopenstack%%3Aheat%%3A%%3A%s%%3Astacks%%2Flook%%2F%s"
            "/resources" % (name, stack_id),
            "",
            canonical + "/resources",
        ),
    ):
        url = base + path + ("?" + query if query else "")
        response = requests.get(url, allow_redirects=False)
        assert response.status_code == 302, (path, response.text)
        assert response.headers["Location"] == expected
    response = requests.put(base + "/look", json={}, allow_redirects=False)
    assert response.status_code == 302
    wrong = "/arn:openstack:heat::other:stacks/look/%s" % stack_id
    assert requests.get(base + wrong).status_code == 404
    assert requests.get(base + "/nope/resources").status_code == 404


def test_show_template_environment_files_outputs(deployment, project):
    name, heat = project
    stack_id = helpers.create(
        heat,
        "show",
        OUTPUTS,
        files={"f.txt": "content"},
        parameters={"secret": "hush"},
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get("show")
    assert stack.parameters["secret"] == "******"
    assert stack.parameters["word"] == "hello"
    assert stack.template_description == "No description"
    outputs = {o["output_key"]: o for o in stack.outputs}
    assert outputs["val"]["output_value"] == "hello"
    assert heat.stacks.template(stack_id) == OUTPUTS
    env = heat.stacks.environment(stack_id)
    assert env["parameters"] == {"secret": "******"}
    assert set(env) >= {
        "parameters",
        "parameter_defaults",
        "resource_registry",
    }
    assert heat.stacks.files(stack_id) == {"f.txt": "content"}
    listed = heat.stacks.output_list(stack_id)["outputs"]
    assert {o["output_key"] for o in listed} == {"val", "bad"}
    assert all("output_value" not in o for o in listed)
    val = heat.stacks.output_show(stack_id, "val")["output"]
    assert val == {
        "output_key": "val",
        "description": "a's value",
        "output_value": "hello",
    }
    exc = error(lambda: heat.stacks.output_show(stack_id, "nope"))
    assert exc.code == 404 and "nope" in str(exc)
    bare = heat.stacks.get(stack_id, resolve_outputs=False)
    assert not hasattr(bare, "outputs")


def test_preview_create_and_update(deployment, project):
    name, heat = project
    preview = heat.stacks.preview(
        stack_name="pre", template=OUTPUTS, parameters={"word": "w"}
    )
    assert preview.id == "None"
    resources = {r["resource_name"]: r for r in preview.resources}
    assert resources["a"]["properties"]["value"] == "w"
    assert resources["a"]["resource_action"] == "INIT"
    assert resources["b"]["metadata"] == {"k": "v"}
    assert list(heat.stacks.list()) == []

    stack_id = helpers.create(
        heat,
        "pre",
        helpers.template(
            {
                "keep": {"type": "OS::Heat::None"},
                "change": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": "one"},
                },
                "swap": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"update_replace_value": "one"},
                },
                "drop": {"type": "OS::Heat::None"},
            }
        ),
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    new = helpers.template(
        {
            "keep": {"type": "OS::Heat::None"},
            "change": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "two"},
            },
            "swap": {
                "type": "OS::Heat::TestResource",
                "properties": {"update_replace_value": "two"},
            },
            "add": {"type": "OS::Heat::None"},
        }
    )
    changes = heat.stacks.preview_update(
        stack_id, template=new, show_nested=True
    )
    changes = {
        k: sorted(r["resource_name"] for r in v)
        for k, v in changes["resource_changes"].items()
    }
    assert changes == {
        "added": ["add"],
        "deleted": ["drop"],
        "replaced": ["swap"],
        "unchanged": ["keep"],
        "updated": ["change"],
    }
    patched = heat.stacks.preview_update(
        stack_id, existing=True, parameters={}
    )
    assert {k: len(v) for k, v in patched["resource_changes"].items()} == {
        "added": 0,
        "deleted": 0,
        "replaced": 0,
        "unchanged": 4,
        "updated": 0,
    }
    assert heat.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"


def test_gates_and_unsupported(deployment, project):
    name, heat = project
    stack_id = helpers.create(heat, "gated", helpers.flat(1))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    exc = error(lambda: heat.stacks.abandon(stack_id))
    # The message names the option that enables a disabled feature.
    assert exc.code == 400 and "Stack Abandon is not supported" in str(exc)
    assert "enable_stack_abandon = true" in str(exc)
    exc = error(lambda: heat.stacks.export(stack_id))
    assert exc.code == 400 and "enable_stack_abandon = true" in str(exc)
    exc = error(
        lambda: heat.stacks.create(
            stack_name="adopted",
            template=helpers.flat(1),
            adopt_stack_data='{"resources": {}}',
        )
    )
    assert exc.code == 400 and "Stack Adopt is not supported" in str(exc)
    assert "enable_stack_adopt = true" in str(exc)
    exc = error(lambda: heat.stacks.snapshot_list(str(uuid.uuid4())))
    assert exc.code == 404


def test_snapshots_of_a_stack_without_cloud_resources(deployment, project):
    """Heat's shapes: create answers the snapshot, show/list wrap it; the
    data is the stack's abandon data; restore is RESTORE_COMPLETE; an
    unknown snapshot is Heat's 404."""
    name, heat = project
    stack_id = helpers.create(heat, "snapped", helpers.flat(2))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    made = heat.stacks.snapshot(stack_id, "snap")
    assert made["name"] == "snap" and made["action"] == "SNAPSHOT"
    assert set(made) >= {"id", "status", "status_reason", "creation_time"}
    helpers.wait_for_status(heat, stack_id, "SNAPSHOT_COMPLETE")
    shown = heat.stacks.snapshot_show(stack_id, made["id"])["snapshot"]
    assert shown["status"] == "COMPLETE"
    assert sorted(shown["data"]["resources"]) == ["r0", "r1"]
    assert shown["data"]["template"] == helpers.flat(2)
    assert [
        s["id"] for s in heat.stacks.snapshot_list(stack_id)["snapshots"]
    ] == [made["id"]]
    heat.stacks.restore(stack_id, made["id"])
    helpers.wait_for_status(heat, stack_id, "RESTORE_COMPLETE")
    missing = str(uuid.uuid4())
    exc = error(lambda: heat.stacks.snapshot_show(stack_id, missing))
    assert exc.code == 404
    assert "The Snapshot (%s) for Stack (snapped) could not be found." % (
        missing
    ) in str(exc)
    heat.stacks.snapshot_delete(stack_id, made["id"])
    assert heat.stacks.snapshot_list(stack_id) == {"snapshots": []}
    # A name that is not a string, or too long, is a 400 (a list was a
    # 500 once: the fuzzer found it); nothing is made.
    for bad in (["a"], {"a": 1}, 7, "n" * 256):
        exc = error(lambda bad=bad: heat.stacks.snapshot(stack_id, bad))
        assert exc.code == 400, (bad, exc)
    assert heat.stacks.snapshot_list(stack_id) == {"snapshots": []}
