"""Abandon and adopt: abandon removes a stack tree and leaves every
physical resource in place; adopt brings the tree back on the same
physical IDs (no create), and later updates and deletes act on them.
The OS::Heat::TestResource ledger proves what exists."""

import json
import os
import subprocess

import pytest
import yaml

from harness import deployment as deployment_mod
from harness import helpers
from heat_lite.resources import test_resource
from tests.functional.conftest import KINDS

EXTRA = """
[DEFAULT]
enable_stack_abandon = true
enable_stack_adopt = true
"""
CHILD = yaml.safe_dump(
    {
        "heat_template_version": "2018-08-31",
        "parameters": {"value": {"type": "string"}},
        "resources": {
            "leaf": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "value"}},
            }
        },
        "outputs": {"out": {"value": {"get_attr": ["leaf", "output"]}}},
    }
)
FILES = {"child.yaml": CHILD}


@pytest.fixture(scope="module", params=KINDS)
def dep(request, tmp_path_factory):
    d = deployment_mod.Deployment(
        request.param,
        tmp_path_factory.mktemp("adopt-" + request.param),
        extra_conf=EXTRA,
    )
    d.start()
    yield d
    d.stop()


def _tree(value="v1"):
    """A TestResource, a template resource and a group of two."""
    return helpers.template(
        {
            "top": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": value},
            },
            "child": {
                "type": "child.yaml",
                "properties": {"value": value},
                "depends_on": "top",
            },
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": "member"},
                    },
                },
            },
        },
        outputs={"out": {"value": {"get_attr": ["child", "out"]}}},
    )


def _physical_ids(data):
    """Every TestResource physical ID named in abandon data."""
    found = set()
    for entry in data["resources"].values():
        if entry.get("resources") is not None:
            found |= _physical_ids(entry)
        elif entry["type"] == "OS::Heat::TestResource":
            found.add(entry["resource_id"])
    return found


def _ledger(dep):
    return test_resource.read_ledger(dep.ledger)


def _abandoned(dep, heat, name):
    stack_id = helpers.create(heat, name, _tree(), files=FILES)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    data = heat.stacks.abandon(stack_id)
    return stack_id, data


def test_abandon_keeps_physical_resources(dep):
    heat = dep.client("ab")
    stack_id, data = _abandoned(dep, heat, "leaving")
    assert data["id"] == stack_id and data["name"] == "leaving"
    assert data["template"] == _tree() and data["files"] == FILES
    top = data["resources"]["top"]
    assert top["type"] == "OS::Heat::TestResource"
    assert top["action"] == "CREATE" and top["status"] == "COMPLETE"
    assert top["resource_data"] == {"value": "v1"}
    assert top["metadata"] == {}
    leaf = data["resources"]["child"]["resources"]["leaf"]
    assert leaf["resource_data"] == {"value": "v1"}
    members = data["resources"]["group"]["resources"]
    assert sorted(members) == ["0", "1"]
    ids = _physical_ids(data)
    assert len(ids) == 4 and all(ids)
    # The stack tree is gone; the physical resources are not.
    assert heat.stacks.get(stack_id).stack_status == "DELETE_COMPLETE"
    assert not [s for s in heat.stacks.list(show_nested=True)]
    created, deleted = _ledger(dep)
    assert ids <= created and not ids & deleted
    events = [e.resource_status_reason for e in heat.events.list(stack_id)]
    assert events[-1] == "Stack DELETE completed successfully"


def test_abandon_refused_while_in_progress(dep):
    heat = dep.client("busy")
    tmpl = helpers.template(
        {
            "slow": {
                "type": "OS::Heat::TestResource",
                # In progress for the abandon call right after the create
                # (the delete then waits for it: keep it short).
                "properties": {"wait_secs": 8},
            }
        }
    )
    stack_id = helpers.create(heat, "busy", tmpl)
    exc = helpers.http_error(lambda: heat.stacks.abandon(stack_id))
    assert exc.code == 409 and "in progress" in str(exc)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_adopt_round_trip(dep):
    heat = dep.client("rt")
    _old, data = _abandoned(dep, heat, "roundtrip")
    ids = _physical_ids(data)
    created_before, _ = _ledger(dep)
    body = heat.stacks.create(
        stack_name="adopted", adopt_stack_data=json.dumps(data)
    )
    stack_id = body["stack"]["id"]
    stack = helpers.wait_for_status(heat, stack_id, "ADOPT_COMPLETE")
    assert stack.stack_status_reason == "Stack ADOPT completed successfully"
    stack = heat.stacks.get(stack_id)
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["out"] == "v1"
    resources = {
        r.resource_name: r
        for r in heat.resources.list(stack_id, nested_depth=2)
    }
    assert (
        resources["top"].physical_resource_id
        == data["resources"]["top"]["resource_id"]
    )
    assert resources["top"].resource_status == "ADOPT_COMPLETE"
    assert (
        resources["leaf"].physical_resource_id
        == data["resources"]["child"]["resources"]["leaf"]["resource_id"]
    )
    assert {resources[m].physical_resource_id for m in ("0", "1")} == {
        data["resources"]["group"]["resources"][m]["resource_id"]
        for m in ("0", "1")
    }
    # Nothing was created again.
    assert _ledger(dep)[0] == created_before
    statuses = {e.resource_status for e in heat.events.list(stack_id)}
    assert {"ADOPT_IN_PROGRESS", "ADOPT_COMPLETE"} <= statuses
    # An update works on the adopted physical IDs (in place).
    heat.stacks.update(stack_id, template=_tree("v2"), files=FILES)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert (
        heat.resources.get(stack_id, "top").physical_resource_id
        == data["resources"]["top"]["resource_id"]
    )
    assert {
        o["output_key"]: o["output_value"]
        for o in heat.stacks.get(stack_id).outputs
    }["out"] == "v2"
    # Delete removes the adopted resources (the ledger is shared with the
    # other tests of the module, whose abandoned resources stay).
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    created, deleted = _ledger(dep)
    assert created == created_before and ids <= deleted


def test_adopt_without_a_resource_fails(dep):
    heat = dep.client("miss")
    one = helpers.template({"a": {"type": "OS::Heat::TestResource"}})
    old = helpers.create(heat, "partial-src", one)
    helpers.wait_for_status(heat, old, "CREATE_COMPLETE")
    data = heat.stacks.abandon(old)
    physical = data["resources"]["a"]["resource_id"]
    # The template has a second resource the data does not name: as in
    # Heat, the adopt fails for it instead of creating it.
    data["template"] = helpers.template(
        {
            "a": {"type": "OS::Heat::TestResource"},
            "b": {"type": "OS::Heat::TestResource"},
        }
    )
    created_before = _ledger(dep)[0]
    body = heat.stacks.create(
        stack_name="partial", adopt_stack_data=json.dumps(data)
    )
    stack_id = body["stack"]["id"]
    stack = helpers.wait_for_status(heat, stack_id, "ADOPT_FAILED")
    assert (
        "resources.b: Resource ID was not provided."
        in stack.stack_status_reason
    )
    a = heat.resources.get(stack_id, "a")
    assert a.physical_resource_id == physical
    assert heat.resources.get(stack_id, "b").resource_status == "ADOPT_FAILED"
    assert _ledger(dep)[0] == created_before
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert physical in _ledger(dep)[1]


def test_plugin_handle_adopt_refuses_what_does_not_exist(dep):
    heat = dep.client("gone")
    tmpl = helpers.template({"a": {"type": "OS::Heat::TestResource"}})
    data = {
        "template": tmpl,
        "resources": {
            "a": {
                "name": "a",
                "type": "OS::Heat::TestResource",
                "resource_id": "never-made",
                "resource_data": {},
            }
        },
    }
    body = heat.stacks.create(
        stack_name="ghost", adopt_stack_data=json.dumps(data)
    )
    stack = helpers.wait_for_status(heat, body["stack"]["id"], "ADOPT_FAILED")
    assert (
        "Test Resource never-made does not exist" in stack.stack_status_reason
    )


def test_adopt_rejects_bad_data(dep):
    heat = dep.client("bad")
    for data, text in (
        ("{not json", "Invalid adopt data"),
        (
            json.dumps({"template": helpers.flat(1), "resources": []}),
            "resources must be a map",
        ),
        ('{"resources": {}}', "No template specified"),
        (
            json.dumps(
                {
                    "template": helpers.flat(1),
                    "resources": {"r0": {"resource_id": 5}},
                }
            ),
            "bad resource_id",
        ),
    ):
        exc = helpers.http_error(
            lambda d=data: heat.stacks.create(
                stack_name="bad", adopt_stack_data=d
            )
        )
        assert exc.code == 400 and text in str(exc), (data, str(exc))


def test_openstack_stack_abandon_and_adopt(dep, tmp_path):
    if dep.kind != "sqlite":
        pytest.skip("the CLI path is the same on every backend")
    tmpl = os.path.join(tmp_path, "t.yaml")
    with open(tmpl, "w") as f:
        yaml.safe_dump(
            helpers.template(
                {
                    "a": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": "cli"},
                    }
                }
            ),
            f,
        )
    osc = [
        deployment_mod.command("openstack"),
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint("cli"),
    ]

    def run(*args):
        result = subprocess.run(
            osc + list(args), capture_output=True, text=True, timeout=180
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    run("stack", "create", "-t", tmpl, "--wait", "cli1")
    adopt_file = os.path.join(tmp_path, "abandoned.json")
    run("stack", "abandon", "cli1", "--output-file", adopt_file)
    with open(adopt_file) as f:
        physical = json.load(f)["resources"]["a"]["resource_id"]
    out = run(
        "stack",
        "adopt",
        "--adopt-file",
        adopt_file,
        "--wait",
        "cli2",
        "-f",
        "json",
    )
    assert (
        json.loads(out[out.index("{") :])["stack_status"] == "ADOPT_COMPLETE"
    )
    shown = json.loads(
        run("stack", "resource", "show", "cli2", "a", "-f", "json")
    )
    assert shown["physical_resource_id"] == physical
    run("stack", "delete", "--yes", "--wait", "cli2")
    assert physical in _ledger(dep)[1]
