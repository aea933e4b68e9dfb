"""Parameter declarations, coercion, constraints and display."""

import pytest

from heat_lite.common import exception
from heat_lite.engine.template import constraints, parameters


def param(ptype, **schema):
    return parameters.Parameter("p", dict(schema, type=ptype))


@pytest.mark.parametrize(
    "ptype, raw, value",
    [
        ("string", 5, "5"),
        ("string", "", ""),
        ("string", True, "true"),
        ("number", "10", 10),
        ("number", "1e3", 1000.0),
        ("number", 0, 0),
        ("comma_delimited_list", "a,b", ["a", "b"]),
        ("comma_delimited_list", "", []),
        ("comma_delimited_list", [1], ["1"]),
        ("json", '{"a": 1}', {"a": 1}),
        ("json", "", {}),
        ("json", [], []),
        ("boolean", "ON", True),
        ("boolean", "0", False),
        ("boolean", False, False),
    ],
)
def test_coercion(ptype, raw, value):
    assert param(ptype).coerce(raw) == value


@pytest.mark.parametrize(
    "ptype, raw",
    [
        ("string", {"a": 1}),
        ("number", "x"),
        ("number", True),
        ("number", []),
        ("comma_delimited_list", 5),
        ("json", "[1,"),
        ("json", "5"),
        ("boolean", "2"),
    ],
)
def test_bad_values(ptype, raw):
    with pytest.raises(exception.StackValidationFailed) as info:
        param(ptype).coerce(raw)
    assert "Parameter 'p' is invalid" in str(info.value)


@pytest.mark.parametrize(
    "spec, value, message",
    [
        ({"length": {"min": 2}}, "a", "The length must be at least 2."),
        (
            {"length": {"max": 2}},
            "abc",
            "The length must be no greater than 2.",
        ),
        (
            {"range": {"min": 1, "max": 2}},
            3,
            "The value must be in the range 1 to 2.",
        ),
        ({"allowed_values": ["a", "b"]}, "c", "Allowed values: a, b"),
    ],
)
def test_constraint_messages(spec, value, message):
    ptype = "number" if "range" in spec else "string"
    with pytest.raises(exception.StackValidationFailed) as info:
        param(ptype, constraints=[spec]).coerce(value)
    assert message in str(info.value)


def test_custom_constraint_registry():
    constraints.register_custom("test.even", lambda v: v % 2 == 0)
    p = param("number", constraints=[{"custom_constraint": "test.even"}])
    assert p.coerce(4) == 4
    with pytest.raises(exception.StackValidationFailed) as info:
        p.coerce(3)
    assert '"3" does not validate test.even' in str(info.value)
    assert "ip_addr" in constraints.custom_names()


def test_display():
    assert param("json").display({"a": 1}) == '{"a": 1}'
    assert param("comma_delimited_list").display(["a", "b"]) == "a,b"
    assert param("boolean").display(False) == "false"
    assert param("string", hidden=True).display("x") == "******"


def test_resolve_values_order_and_falsy():
    schema = parameters.parse_schema(
        {
            "a": {"type": "string", "default": "t"},
            "b": {"type": "number", "default": 5},
            "c": {"type": "boolean"},
        }
    )
    values = parameters.resolve_values(
        schema, {"b": 0, "c": "false"}, {"a": "", "zzz": 1}
    )
    assert values == {"a": "", "b": 0, "c": False}
    with pytest.raises(exception.UserParameterMissing):
        parameters.resolve_values(schema, {}, {})


def test_resolve_values_unknown_need_not_fit():
    schema = parameters.parse_schema(
        {"n": {"type": "number"}, "m": {"type": "number"}}
    )
    # A validate: every declared name may be unknown, bad values too.
    values = parameters.resolve_values(
        schema, {"n": "abc"}, {"m": "x"}, unknown=("n", "m")
    )
    assert values == {"n": None, "m": None}
    assert parameters.resolve_values(schema, {"n": "2"}, unknown=("n", "m"))[
        "n"
    ] == (2)
    # A create: the same value is refused.
    with pytest.raises(exception.StackValidationFailed):
        parameters.resolve_values(schema, {"n": "abc", "m": 1})


def test_resolve_values_default_failing_custom_constraint():
    """Horizon validates a template whose image parameter defaults to an
    image this cloud lacks: Heat checks defaults without their custom
    constraints, so the validate passes; the create does not."""
    constraints.register_custom("test.never", lambda value: False)
    schema = parameters.parse_schema(
        {
            "image": {
                "type": "string",
                "default": "cirros",
                "constraints": [{"custom_constraint": "test.never"}],
            }
        }
    )
    assert parameters.resolve_values(schema, {}, unknown=("image",)) == {
        "image": None
    }
    with pytest.raises(exception.StackValidationFailed) as info:
        parameters.resolve_values(schema, {})
    assert "does not validate test.never" in str(info.value)


def test_parameter_groups_reject_duplicates():
    schema = parameters.parse_schema({"a": {"type": "string"}})
    with pytest.raises(exception.StackValidationFailed) as info:
        parameters.validate_groups(
            [{"parameters": ["a"]}, {"label": "g2", "parameters": ["a"]}],
            schema,
        )
    assert "must be assigned to one parameter group only" in str(info.value)
