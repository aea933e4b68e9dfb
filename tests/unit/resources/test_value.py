"""OS::Heat::Value: type coercion, in-place updates, attribute."""

import pytest

from heat_lite.common import exception
from heat_lite.resources import value as value_mod

PATH = "resources.v.properties"
STACK = {"name": "st", "id": "sid", "record_uuid": "0123456789abcdef"}


def _props(**values):
    return value_mod.Value.validate_properties(values, PATH)


@pytest.mark.parametrize(
    "value_type, given, expected",
    [
        ("number", "3", 3),
        ("number", "2.5", 2.5),
        ("number", 7, 7),
        ("string", 42, "42"),
        ("string", True, "true"),
        ("boolean", "yes", True),
        ("boolean", "false", False),
        ("comma_delimited_list", ["a", "b"], ["a", "b"]),
        ("json", {"k": [1]}, {"k": [1]}),
    ],
)
def test_value_is_coerced_to_its_type(value_type, given, expected):
    assert _props(value=given, type=value_type)["value"] == expected


@pytest.mark.parametrize(
    "value_type, given",
    [
        ("number", "three"),
        ("number", "1e999"),
        ("number", "-1.0E400"),
        ("number", float("nan")),
        ("number", float("inf")),
        ("boolean", "maybe"),
        ("string", {"a": 1}),
        ("json", [1, 2]),
        ("comma_delimited_list", {"a": 1}),
    ],
)
def test_value_of_the_wrong_type_fails_validation(value_type, given):
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(value=given, type=value_type)
    assert "resources.v.properties.value" in str(err.value)


def test_without_type_anything_goes_unchanged():
    for given in ({"a": [1, {"b": None}]}, [1, "x"], "text", 3.5, False):
        assert _props(value=given)["value"] == given


def test_value_is_required_and_type_constrained():
    with pytest.raises(exception.StackValidationFailed) as err:
        _props()
    assert "Property value not assigned" in str(err.value)
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(value=1, type="float")
    assert "not an allowed value" in str(err.value)


def test_unresolved_value_is_coerced_later():
    props = value_mod.Value.validate_properties(
        {"type": "number"}, PATH, ["value"]
    )
    assert props == {"type": "number"}


def test_create_and_update_in_place():
    plugin = value_mod.Value(
        "v", "OS::Heat::Value", _props(value="a"), stack=STACK
    )
    plugin.handle_create()
    assert plugin.resource_id == "st-v-0123456789ab"
    assert plugin.get_attribute("value") == "a"
    new = _props(value={"x": [1, 2]}, type="json")
    assert not plugin.needs_replace(new, {"value", "type"})
    plugin.handle_update(new, {"value", "type"})
    assert plugin.get_attribute("value") == {"x": [1, 2]}
    assert plugin.get_attribute("value", ["x", 1]) == 2
    assert plugin.resource_id == "st-v-0123456789ab"
