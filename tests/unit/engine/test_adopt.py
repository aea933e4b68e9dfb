"""Adopt data: what a request may carry, and what a plugin gets."""

import pytest

from heat_lite.common import exception
from heat_lite.engine.traversal import planner
from heat_lite.engine.worker import adopt
from heat_lite.resources import base

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"a": {"type": "OS::Heat::None"}},
}


def test_inputs_take_the_data_unless_the_request_overrides():
    data = {
        "template": TEMPLATE,
        "files": {"f": "data", "g": "data"},
        "environment": {"parameters": {"p": "old", "q": "old"}},
        "resources": {},
    }
    template, params, files = adopt.inputs(
        data, None, {"q": "new"}, {"g": "request"}
    )
    assert template == TEMPLATE
    assert params == {"p": "old", "q": "new"}
    assert files == {"f": "data", "g": "request"}
    other = {"heat_template_version": "2018-08-31"}
    assert adopt.inputs(data, other, {}, {})[0] is other


@pytest.mark.parametrize(
    "data",
    [
        {"template": TEMPLATE, "resources": []},
        {"template": TEMPLATE, "resources": {"a": "x"}},
        {"template": TEMPLATE, "resources": {"a": {"resource_id": 3}}},
        {"template": TEMPLATE, "resources": {"a": {"resource_data": []}}},
        {
            "template": TEMPLATE,
            "resources": {"a": {"resources": {"b": {"metadata": "no"}}}},
        },
        {"template": TEMPLATE, "resources": {"a": {"resource_id": "x" * 256}}},
        {"template": "not a map", "resources": {}},
    ],
)
def test_malformed_data_is_invalid(data):
    with pytest.raises(exception.Invalid):
        adopt.inputs(data, None, {}, {})


def test_plugin_gets_the_entry_and_nested_resources():
    plugin = base.Resource(
        "g",
        "T",
        {},
        "phys",
        {"k": "v", planner.ADOPT_NESTED_KEY: {"0": {"resource_id": "m"}}},
    )
    assert adopt.resource_data(plugin) == {
        "resource_id": "phys",
        "resource_data": {"k": "v"},
        "resources": {"0": {"resource_id": "m"}},
    }


def test_default_handle_adopt_needs_a_physical_id():
    base.Resource("a", "T", {}, "phys", {}).handle_adopt({})
    with pytest.raises(
        base.AdoptFailed, match="Resource ID was not provided."
    ):
        base.Resource("a", "T", {}, None, {}).handle_adopt({})


def test_no_adopt_data_changes_nothing():
    assert adopt.inputs(None, TEMPLATE, {"p": 1}, {}) == (
        TEMPLATE,
        {"p": 1},
        {},
    )
