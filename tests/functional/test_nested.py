"""Nested stacks: template resources, groups and chains converge inside
their child stacks, on the same child stack IDs."""

import yaml

from harness import helpers
from tests.resources_ledger import assert_no_leaks

CHILD = yaml.safe_dump(
    {
        "heat_template_version": "2018-08-31",
        "parameters": {
            "value": {"type": "string"},
            "shared": {"type": "string", "default": "none"},
        },
        "resources": {
            "leaf": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "value"}},
            }
        },
        "outputs": {
            "out": {"value": {"get_attr": ["leaf", "output"]}},
            "shared": {"value": {"get_param": "shared"}},
        },
    }
)


def _parent(value, rtype="child.yaml"):
    return helpers.template(
        {"r": {"type": rtype, "properties": {"value": value}}},
        outputs={
            "out": {"value": {"get_attr": ["r", "out"]}},
            "shared": {"value": {"get_attr": ["r", "shared"]}},
            "inner": {"value": {"get_attr": ["r", "resource.leaf"]}},
            "ref": {"value": {"get_resource": "r"}},
        },
    )


def _outputs(heat, stack_id):
    return {
        o["output_key"]: o.get("output_value")
        for o in heat.stacks.get(stack_id).outputs
    }


def _children(heat, parent_id):
    return [
        s for s in heat.stacks.list(show_nested=True) if s.parent == parent_id
    ]


def test_template_resource_updates_in_place(deployment, heat):
    files = {"child.yaml": CHILD}
    env = {"parameter_defaults": {"shared": "from-parent"}}
    stack_id = helpers.create(
        heat, "nest", _parent("one"), files=files, environment=env
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    children = _children(heat, stack_id)
    assert len(children) == 1
    child = children[0]
    assert child.stack_name.startswith("nest-r-")
    leaf_before = {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(child.id)
    }
    outputs = _outputs(heat, stack_id)
    assert outputs["out"] == "one"
    assert outputs["shared"] == "from-parent"
    assert outputs["inner"] == leaf_before["leaf"]
    assert outputs["ref"].startswith("arn:openstack:heat::")
    assert outputs["ref"].endswith(child.id)
    resource = heat.resources.get(stack_id, "r")
    assert resource.physical_resource_id == child.id

    heat.stacks.update(
        stack_id, template=_parent("two"), files=files, environment=env
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert [c.id for c in _children(heat, stack_id)] == [child.id]
    assert heat.stacks.get(child.id).stack_status == "UPDATE_COMPLETE"
    leaf_after = {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(child.id)
    }
    assert leaf_after == leaf_before
    assert _outputs(heat, stack_id)["out"] == "two"

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert heat.stacks.get(child.id).stack_status == "DELETE_COMPLETE"
    assert_no_leaks(deployment)


def test_a_new_template_file_updates_the_child_in_place(deployment, heat):
    """As in Heat, a template resource whose type names another template
    file is an update of the same child stack, not a replacement; the
    preview says so too."""
    files = {"child.yaml": CHILD, "child-v2.yaml": CHILD + "\n"}
    stack_id = helpers.create(heat, "retype", _parent("one"), files=files)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    [child] = _children(heat, stack_id)
    leaf = heat.resources.get(child.id, "leaf").physical_resource_id
    changed = _parent("one", rtype="child-v2.yaml")

    preview = heat.stacks.preview_update(
        stack_id, template=changed, files=files
    )["resource_changes"]
    assert [r["resource_name"] for r in preview["updated"]] == ["r"]
    assert preview["replaced"] == []

    heat.stacks.update(stack_id, template=changed, files=files)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert [c.id for c in _children(heat, stack_id)] == [child.id]
    resource = heat.resources.get(stack_id, "r")
    assert resource.physical_resource_id == child.id
    assert resource.resource_type == "child-v2.yaml"
    assert heat.resources.get(child.id, "leaf").physical_resource_id == leaf

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_three_levels_through_the_registry(deployment, heat):
    level3 = CHILD
    level2 = yaml.safe_dump(
        {
            "heat_template_version": "2018-08-31",
            "parameters": {"value": {"type": "string"}},
            "resources": {
                "deeper": {
                    "type": "Level::Three",
                    "properties": {"value": {"get_param": "value"}},
                }
            },
            "outputs": {"out": {"value": {"get_attr": ["deeper", "out"]}}},
        }
    )
    files = {"level2.yaml": level2, "level3.yaml": level3}
    env = {
        "resource_registry": {
            "Level::Two": "level2.yaml",
            "Level::Three": "level3.yaml",
        }
    }
    tmpl = helpers.template(
        {"top": {"type": "Level::Two", "properties": {"value": "a"}}},
        outputs={"out": {"value": {"get_attr": ["top", "out"]}}},
    )
    stack_id = helpers.create(heat, "deep", tmpl, files=files, environment=env)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert _outputs(heat, stack_id)["out"] == "a"
    level2_id = _children(heat, stack_id)[0].id
    level3_id = _children(heat, level2_id)[0].id
    tmpl["resources"]["top"]["properties"]["value"] = "b"
    heat.stacks.update(stack_id, template=tmpl, files=files, environment=env)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert _outputs(heat, stack_id)["out"] == "b"
    assert _children(heat, stack_id)[0].id == level2_id
    assert _children(heat, level2_id)[0].id == level3_id
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_recursion_is_refused_at_create(deployment, heat):
    loop = yaml.safe_dump(
        {
            "heat_template_version": "2018-08-31",
            "resources": {"again": {"type": "loop.yaml"}},
        }
    )
    exc = helpers.http_error(
        lambda: helpers.create(
            heat,
            "loop",
            helpers.template({"start": {"type": "loop.yaml"}}),
            files={"loop.yaml": loop},
        )
    )
    assert exc.code == 400 and "Recursion depth exceeds" in str(exc)
    assert [s for s in heat.stacks.list() if s.stack_name == "loop"] == []


def test_resource_limit_counts_the_whole_tree(deployment, heat):
    """max_resources_per_stack (1000 here) counts nested stacks too, and
    a group's count when it is known at create time."""
    child = yaml.safe_dump(
        helpers.template(
            {
                "g": {
                    "type": "OS::Heat::ResourceGroup",
                    "properties": {
                        "count": 500,
                        "resource_def": {"type": "OS::Heat::None"},
                    },
                }
            }
        )
    )
    two = helpers.template(
        {"a": {"type": "child.yaml"}, "b": {"type": "child.yaml"}}
    )
    exc = helpers.http_error(
        lambda: helpers.create(heat, "tree", two, files={"child.yaml": child})
    )
    assert exc.code == 400 and "Maximum resources per stack" in str(exc)
    by_param = helpers.template(
        {
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": {"get_param": "n"},
                    "resource_def": {"type": "OS::Heat::None"},
                },
            }
        },
        parameters={"n": {"type": "number", "default": 10**9}},
    )
    exc = helpers.http_error(lambda: helpers.create(heat, "big", by_param))
    assert exc.code == 400 and "Maximum resources per stack" in str(exc)
    # Known only once a resource exists: the group fails, not the engine.
    later = helpers.template(
        {
            "n": {"type": "OS::Heat::Value", "properties": {"value": 10**9}},
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": {"get_attr": ["n", "value"]},
                    "resource_def": {"type": "OS::Heat::None"},
                },
            },
        }
    )
    stack_id = helpers.create(heat, "later", later)
    stack = helpers.wait_for_status(heat, stack_id, "CREATE_FAILED")
    assert "Maximum resources per stack" in stack.stack_status_reason
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    names = {s.stack_name for s in heat.stacks.list()}
    assert not names & {"tree", "big"}


def _group(count, **extra):
    props = dict(
        {
            "count": count,
            "resource_def": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "member-%index%"},
            },
        },
        **extra,
    )
    return helpers.template(
        {"group": {"type": "OS::Heat::ResourceGroup", "properties": props}},
        outputs={
            "refs": {"value": {"get_attr": ["group", "refs"]}},
            "values": {"value": {"get_attr": ["group", "output"]}},
            "one": {"value": {"get_attr": ["group", "resource.1", "output"]}},
        },
    )


def test_resource_group_scales(deployment, heat):
    stack_id = helpers.create(heat, "group", _group(3))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    outputs = _outputs(heat, stack_id)
    assert outputs["values"] == ["member-0", "member-1", "member-2"]
    assert outputs["one"] == "member-1"
    assert len(outputs["refs"]) == 3
    child_id = heat.resources.get(stack_id, "group").physical_resource_id

    heat.stacks.update(stack_id, template=_group(5))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    outputs = _outputs(heat, stack_id)
    assert outputs["values"][:3] == ["member-0", "member-1", "member-2"]
    assert len(outputs["refs"]) == 5
    assert (
        heat.resources.get(stack_id, "group").physical_resource_id == child_id
    )

    heat.stacks.update(
        stack_id,
        template=_group(2, removal_policies=[{"resource_list": ["0"]}]),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    outputs = _outputs(heat, stack_id)
    assert outputs["values"] == ["member-1", "member-2"]
    names = {r.resource_name for r in heat.resources.list(child_id)}
    assert names == {"1", "2"}
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_resource_chain(deployment, heat):
    tmpl = helpers.template(
        {
            "chain": {
                "type": "OS::Heat::ResourceChain",
                "properties": {
                    "resources": ["OS::Heat::TestResource"] * 3,
                    "resource_properties": {"value": "v"},
                },
            }
        },
        outputs={"refs": {"value": {"get_attr": ["chain", "refs"]}}},
    )
    stack_id = helpers.create(heat, "chain", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    child_id = heat.resources.get(stack_id, "chain").physical_resource_id
    events = list(heat.events.list(child_id, sort_dir="asc"))
    order = [
        e.resource_name
        for e in events
        if e.resource_status == "CREATE_COMPLETE"
        and e.resource_name in ("0", "1", "2")
    ]
    assert order == ["0", "1", "2"]
    assert len(_outputs(heat, stack_id)["refs"]) == 3
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)
