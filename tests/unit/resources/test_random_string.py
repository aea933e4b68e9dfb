"""OS::Heat::RandomString: generation, validation, identity."""

import random
import string

import pytest

from heat_lite.common import exception
from heat_lite.resources import random_string as rs

PATH = "resources.r.properties"
STACK = {"name": "st", "id": "sid", "record_uuid": "0123456789abcdef"}


def _props(**values):
    return rs.RandomString.validate_properties(values, PATH)


def _created(**values):
    plugin = rs.RandomString(
        "r", "OS::Heat::RandomString", _props(**values), stack=STACK
    )
    plugin.handle_create()
    return plugin


def test_defaults_give_32_letters_and_digits():
    props = _props()
    assert props["length"] == 32
    assert props["character_classes"] == [{"class": "lettersdigits", "min": 1}]
    value = _created().get_attribute("value")
    assert len(value) == 32
    assert set(value) <= set(string.ascii_letters + string.digits)


def test_minimums_of_every_class_and_sequence_are_met():
    rng = random.Random(4)
    for _ in range(50):
        value = rs.generate(
            8,
            [{"class": "digits", "min": 3}, {"class": "uppercase", "min": 2}],
            [{"sequence": "!@", "min": 2}],
            rng=rng,
        )
        assert len(value) == 8
        assert sum(ch in string.digits for ch in value) >= 3
        assert sum(ch in string.ascii_uppercase for ch in value) >= 2
        assert sum(ch in "!@" for ch in value) >= 2
        assert set(value) <= set(string.digits + string.ascii_uppercase + "!@")


def test_hexdigits_are_upper_case_as_in_heat():
    value = rs.generate(200, [{"class": "hexdigits", "min": 1}], [])
    assert set(value) <= set("0123456789ABCDEF")


def test_sequences_only_still_use_the_default_class():
    # Heat's default character_classes applies unless it is given.
    props = _props(length=10, character_sequences=[{"sequence": "#"}])
    assert props["character_classes"] == [{"class": "lettersdigits", "min": 1}]
    assert props["character_sequences"] == [{"sequence": "#", "min": 1}]


def test_only_given_sequences_when_classes_are_empty():
    value = _created(
        length=12,
        character_classes=[],
        character_sequences=[{"sequence": "xy"}],
    )
    assert set(value.get_attribute("value")) <= {"x", "y"}


def test_values_differ_between_resources():
    assert _created().get_attribute("value") != _created().get_attribute(
        "value"
    )


def test_sum_of_minimums_must_fit_in_length():
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(
            length=3,
            character_classes=[{"class": "digits", "min": 2}],
            character_sequences=[{"sequence": "ab", "min": 2}],
        )
    assert (
        "Length property cannot be smaller than combined character "
        "class and character sequence minimums" in str(err.value)
    )
    assert (
        _props(
            length=4,
            character_classes=[{"class": "digits", "min": 2}],
            character_sequences=[{"sequence": "ab", "min": 2}],
        )["length"]
        == 4
    )


def test_unresolved_values_are_checked_later():
    props = rs.RandomString.validate_properties(
        {"length": 1, "character_classes": [{"class": "digits", "min": 5}]},
        PATH,
        ["salt"],
    )
    assert props["length"] == 1


@pytest.mark.parametrize(
    "values, message",
    [
        ({"length": 0}, "out of range"),
        ({"length": 513}, "out of range"),
        ({"character_classes": [{"class": "emoji"}]}, "not an allowed value"),
        (
            {"character_classes": [{"class": "digits", "min": 0}]},
            "out of range",
        ),
        ({"character_sequences": [{"min": 1}]}, "sequence not assigned"),
        ({"unknown": 1}, "Unknown Property unknown"),
    ],
)
def test_property_schema(values, message):
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(**values)
    assert message in str(err.value)


def test_deprecated_sequence_becomes_a_character_class():
    props = _props(sequence="octdigits", length=40)
    assert props["character_classes"] == [{"class": "octdigits", "min": 1}]
    plugin = _created(sequence="octdigits", length=40)
    assert set(plugin.get_attribute("value")) <= set(string.octdigits)
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(sequence="digits", character_classes=[{"class": "letters"}])
    assert "Cannot use deprecated 'sequence' property" in str(err.value)


def test_reference_is_the_value_and_resource_id_the_physical_name():
    plugin = rs.RandomString(
        "r", "OS::Heat::RandomString", _props(), stack=STACK
    )
    assert plugin.get_reference_id() == "r"
    plugin.handle_create()
    assert plugin.resource_id == "st-r-0123456789ab"
    assert plugin.get_reference_id() == plugin.data()["value"]
    assert plugin.get_reference_id() == plugin.get_attribute("value")


def test_any_change_replaces_even_salt():
    plugin = _created(salt="a")
    for changed in (
        {"salt"},
        {"length"},
        {"character_classes"},
        {"character_sequences"},
    ):
        assert plugin.needs_replace(_props(salt="b"), changed)
    assert not any(
        s.update_allowed for s in rs.RandomString.properties_schema.values()
    )


def test_schema_shows_heat_defaults():
    shown = rs.RandomString.properties_schema["character_classes"].to_dict()
    assert shown["default"] == [{"class": "lettersdigits", "min": 1}]
    assert shown["schema"]["class"]["default"] == "lettersdigits"
    assert set(rs.RandomString.attributes()) == {"value", "show"}
