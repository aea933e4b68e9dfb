"""Preview create of nested stacks, validation of duplicate names and the
files a child stack keeps: the parts of previews that need no database."""

import json

import pytest

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.engine import validation
from heat_lite.engine.endpoint import preview
from heat_lite.engine.traversal import nested
from heat_lite.resources import test_resource

LEAF = json.dumps(
    {
        "heat_template_version": "2018-08-31",
        "parameters": {"v": {"type": "string", "default": "d"}},
        "resources": {
            "l": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "v"}},
            }
        },
    }
)
STACK = {"id": "None", "name": "p", "tenant": "proj"}


def _bind(resources, files=None, env=None, parameters=None):
    template = {"heat_template_version": "2018-08-31", "resources": resources}
    if parameters:
        template["parameters"] = parameters
    info = {"name": "p", "id": "None", "project_id": "proj"}
    return validation.bind(
        template, validation.environment(env, None), files or {}, info
    )


def _names(items):
    return [
        _names(i) if isinstance(i, list) else i["resource_name"] for i in items
    ]


def test_nested_stacks_preview_as_nested_lists():
    bound = _bind(
        {
            "tr": {"type": "file:///t/leaf.yaml", "properties": {"v": "x"}},
            "grp": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {"type": "My::Leaf"},
                },
            },
            "plain": {"type": "OS::Heat::None"},
        },
        files={"file:///t/leaf.yaml": LEAF},
        env={"resource_registry": {"My::Leaf": "file:///t/leaf.yaml"}},
    )
    resources = preview.create_resources(STACK, bound)
    assert _names(resources) == [["l"], [["l"], ["l"]], "plain"]
    tr, grp, plain = resources
    assert tr[0]["properties"]["value"] == "x"
    assert tr[0]["stack_name"] == "p-tr"
    assert tr[0]["parent_resource"] == "tr"
    assert grp[1][0]["stack_name"] == "p-grp-1"
    assert grp[1][0]["properties"]["value"] == "d"
    assert "parent_resource" not in plain


def test_recursive_template_resources_stop_at_the_depth_limit():
    loop = json.dumps(
        {
            "heat_template_version": "2018-08-31",
            "resources": {"again": {"type": "loop.yaml"}},
        }
    )
    # Refused when the template is bound (engine.limits), before any
    # preview is built.
    with pytest.raises(
        exception.StackValidationFailed, match="Recursion depth exceeds"
    ):
        bound = _bind({"r": {"type": "loop.yaml"}}, files={"loop.yaml": loop})
        preview.create_resources(STACK, bound)


def test_a_parameter_and_a_resource_may_not_share_a_name():
    with pytest.raises(exception.StackValidationFailed) as caught:
        _bind(
            {"b": {"type": "OS::Heat::None"}, "a": {"type": "OS::Heat::None"}},
            parameters={
                "a": {"type": "string", "default": ""},
                "b": {"type": "string", "default": ""},
            },
        )
    assert str(caught.value) == "Duplicate names {'a', 'b'}"
    _bind(
        {"a": {"type": "OS::Heat::None"}},
        parameters={"c": {"type": "string", "default": ""}},
    )


def test_child_files_follow_references_through_nested_templates():
    files = {
        "file:///t/a.yaml": '{"type": "file:///t/sub/b.yaml"}',
        "file:///t/sub/b.yaml": '{"get_file": "file:///t/c.txt"}',
        "file:///t/c.txt": "text",
        "file:///t/unused.yaml": "{}",
    }
    found = nested.referenced_files(files, '{"type": "file:///t/a.yaml"}')
    assert sorted(found) == [
        "file:///t/a.yaml",
        "file:///t/c.txt",
        "file:///t/sub/b.yaml",
    ]


def test_update_replace_asks_for_replacement_when_value_changes():
    plugin = test_resource.TestResource("r", "OS::Heat::TestResource", {})
    assert plugin.needs_replace(
        {"value": "b", "update_replace": True}, {"value"}
    )
    assert not plugin.needs_replace({"value": "b"}, {"value"})
    assert not plugin.needs_replace(
        {"update_replace": True}, {"update_replace"}
    )
    assert plugin.needs_replace({}, {"update_replace_value"})


def test_a_property_without_a_value_yet_previews_as_null():
    bound = _bind(
        {
            "a": {"type": "OS::Heat::TestResource"},
            "v": {
                "type": "OS::Heat::Value",
                "properties": {"value": {"get_attr": ["a", "output"]}},
            },
        }
    )
    _a, v = preview.create_resources(STACK, bound)
    assert v["properties"]["value"] is None


@pytest.fixture
def small_limit():
    conf.CONF.set_override("max_resources_per_stack", 4)
    yield
    conf.CONF.clear_override("max_resources_per_stack")


def test_a_preview_counts_resources_over_the_whole_tree(small_limit):
    group = {
        "type": "OS::Heat::ResourceGroup",
        "properties": {
            "count": 2,
            "resource_def": {"type": "file:///t/leaf.yaml"},
        },
    }
    files = {"file:///t/leaf.yaml": LEAF}
    # 1 group + 2 members + 1 resource in each member's stack = 5 > 4
    with pytest.raises(
        exception.RequestLimitExceeded,
        match="Maximum resources per stack exceeded.",
    ):
        bound = _bind({"grp": group}, files=files)
        preview.create_resources(STACK, bound)
    group["properties"]["count"] = 1
    assert _names(
        preview.create_resources(STACK, _bind({"grp": group}, files=files))
    ) == [[["l"]]]
