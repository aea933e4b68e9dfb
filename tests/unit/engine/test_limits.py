"""The size of a stack tree, counted before anything is stored."""

import pytest
import yaml

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.engine import definitions, limits

CONF = conf.CONF
INFO = {"name": "s", "id": "1", "project_id": "p"}


@pytest.fixture(autouse=True)
def _conf():
    CONF([], project="heat_lite")
    yield
    CONF.clear_override("max_resources_per_stack")


def _tmpl(resources, **extra):
    return dict(
        heat_template_version="2018-08-31", resources=resources, **extra
    )


def _group(count, member="OS::Heat::None"):
    return {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": count, "resource_def": {"type": member}},
    }


def _size(tmpl, files=None, env=None):
    return limits.tree_size(definitions.bind(tmpl, env, files or {}, INFO))


def test_the_whole_tree_counts():
    child = yaml.safe_dump(
        _tmpl({"a": {"type": "OS::Heat::None"}, "g": _group(3)})
    )
    files = {"child.yaml": child}
    # parent: x + t (1 + child: a + g (1 + 3)) + chain (1 + 2)
    tmpl = _tmpl(
        {
            "x": {"type": "OS::Heat::None"},
            "t": {"type": "child.yaml"},
            "c": {
                "type": "OS::Heat::ResourceChain",
                "properties": {"resources": ["OS::Heat::None"] * 2},
            },
        }
    )
    assert _size(tmpl, files) == 1 + 1 + (1 + 1 + 3) + 1 + 2
    # A group of template resources: each member's tree.
    assert _size(_tmpl({"g": _group(4, "child.yaml")}), files) == 1 + 4 * 6


def test_counts_from_parameters_and_the_limit():
    tmpl = _tmpl(
        {"g": _group({"get_param": "n"})},
        parameters={"n": {"type": "number", "default": 7}},
    )
    assert _size(tmpl) == 8
    CONF.set_override("max_resources_per_stack", 7)
    with pytest.raises(exception.RequestLimitExceeded):
        _size(tmpl)
    CONF.set_override("max_resources_per_stack", -1)
    assert _size(_tmpl({"g": _group(10**9)})) == 10**9 + 1


def test_unknown_counts_are_left_for_later():
    tmpl = _tmpl(
        {
            "v": {"type": "OS::Heat::Value", "properties": {"value": 5}},
            "g": _group({"get_attr": ["v", "value"]}),
        }
    )
    assert _size(tmpl) == 1 + 1 + 1


def test_recursion_is_refused():
    loop = yaml.safe_dump(_tmpl({"again": {"type": "loop.yaml"}}))
    with pytest.raises(exception.StackValidationFailed) as info:
        _size(_tmpl({"start": {"type": "loop.yaml"}}), {"loop.yaml": loop})
    assert "Recursion depth exceeds" in str(info.value)
