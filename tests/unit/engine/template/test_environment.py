"""The environment: parsing, masking, server-side merge of env files."""

import json

import pytest

from heat_lite.common import exception
from heat_lite.engine.template import environment, merge, parameters


@pytest.mark.parametrize("raw", [None, "", {}, "{}", "parameters: {}\n"])
def test_every_section_is_present(raw):
    env = environment.parse(raw)
    assert set(env) == set(environment.SECTIONS)
    assert env["event_sinks"] == [] and env["parameters"] == {}


def test_parse_text_and_idempotence():
    text = json.dumps(
        {
            "parameters": {"a": 1},
            "resource_registry": {"OS::X": "OS::Heat::None"},
        }
    )
    env = environment.parse(text)
    assert env["parameters"] == {"a": 1}
    assert environment.parse(env) == env


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"paramters": {}}, 'environment has wrong section "paramters"'),
        ({"parameters": None}, 'environment has empty section "parameters"'),
        ("- a list", "not a valid YAML mapping"),
        ("a: [unclosed", "Error parsing environment"),
        ({"parameters": [1]}, 'The "parameters" section must be a map'),
        ({"event_sinks": {}}, 'The "event_sinks" section must be a list'),
        (
            {"resource_registry": {"OS::A": ["x"]}},
            "must be a type or template",
        ),
    ],
)
def test_bad_environments(raw, fragment):
    with pytest.raises(exception.StackValidationFailed) as info:
        environment.parse(raw)
    assert fragment in str(info.value)


def test_hooks_and_restricted_actions_are_checked():
    with pytest.raises(exception.InvalidBreakPointHook) as info:
        environment.parse(
            {
                "resource_registry": {
                    "resources": {"web": {"hooks": ["pre-create", "pre-bake"]}}
                }
            }
        )
    assert 'Invalid hook type "pre-bake"' in str(info.value)
    with pytest.raises(exception.InvalidRestrictedAction):
        environment.parse(
            {
                "resource_registry": {
                    "resources": {"web": {"restricted_actions": "delete"}}
                }
            }
        )
    env = environment.parse(
        {
            "resource_registry": {
                "resources": {
                    "web": {
                        "hooks": "pre-update",
                        "restricted_actions": ["replace"],
                        "nested": {"hooks": "post-create"},
                    }
                }
            }
        }
    )
    assert (
        env["resource_registry"]["resources"]["web"]["hooks"] == "pre-update"
    )


def test_masked():
    env = environment.parse(
        {
            "parameters": {"pw": "x", "user": "u"},
            "parameter_defaults": {"pw": "y"},
        }
    )
    shown = environment.masked(env, {"pw"})
    assert shown["parameters"] == {"pw": "******", "user": "u"}
    assert shown["parameter_defaults"] == {"pw": "******"}
    assert env["parameters"]["pw"] == "x"


def _schema(**types):
    return {
        name: parameters.Parameter(name, {"type": t})
        for name, t in types.items()
    }


def test_merge_overwrite_by_default_in_order():
    files = {
        "a.yaml": "parameters: {x: 1, y: 1}\n",
        "b.yaml": {
            "parameters": {"x": 2},
            "resource_registry": {"OS::A": "a.yaml"},
        },
    }
    env = environment.merge_files(
        {"parameters": {"z": 0}}, ["a.yaml", "b.yaml"], files
    )
    assert env["parameters"] == {"x": 2, "y": 1, "z": 0}
    assert env["resource_registry"] == {"OS::A": "a.yaml"}
    assert "parameter_merge_strategies" in env


def test_merge_strategies_by_type():
    # A strategy chosen by an earlier file holds for the later ones.
    first = {
        "parameter_merge_strategies": {"default": "merge", "d": "deep_merge"},
        "parameters": {
            "s": "ab",
            "l": "a,b",
            "j": {"a": {"x": 1}},
            "n": 1,
            "d": {"a": {"x": 1}},
        },
    }
    second = {
        "parameters": {
            "s": "cd",
            "l": ["c"],
            "j": {"a": {"y": 2}},
            "n": "2",
            "d": {"a": {"y": 2}},
        }
    }
    env = merge.merge_files(
        None,
        ["1", "2"],
        {"1": first, "2": second},
        _schema(
            s="string",
            l="comma_delimited_list",
            j="json",
            n="number",
            d="json",
        ),
    )
    assert env["parameters"] == {
        "s": "abcd",
        "l": ["a", "b", "c"],
        "j": {"a": {"y": 2}},
        "n": 3,
        "d": {"a": {"x": 1, "y": 2}},
    }


def test_merge_without_schema_uses_value_types():
    files = {
        "1": {
            "parameter_merge_strategies": {"default": "merge"},
            "parameter_defaults": {"l": ["a"], "s": "x"},
        },
        "2": {
            "parameter_merge_strategies": {"default": "merge"},
            "parameter_defaults": {"l": ["b"], "s": "y"},
            "event_sinks": [{"type": "zaqar-queue"}],
        },
    }
    env = merge.merge_files({}, ["1", "2"], files)
    assert env["parameter_defaults"] == {"l": ["a", "b"], "s": "xy"}
    assert env["event_sinks"] == [{"type": "zaqar-queue"}]


def test_conflicting_strategies():
    # As in Heat, a file without strategies fixes "overwrite" for its
    # parameters; a later file asking for another strategy conflicts.
    files = {
        "1": {
            "parameter_merge_strategies": {"x": "merge"},
            "parameters": {"x": "a"},
        },
        "2": {
            "parameter_merge_strategies": {"x": "deep_merge"},
            "parameters": {"x": "b"},
        },
    }
    with pytest.raises(exception.ConflictingMergeStrategyForParam) as info:
        merge.merge_files({}, ["1", "2"], files)
    assert "'x' in file '2'" in str(info.value)


def test_merge_of_booleans_is_invalid():
    files = {
        "1": {
            "parameter_merge_strategies": {"b": "merge"},
            "parameters": {"b": True},
        },
        "2": {"parameters": {"b": False}},
    }
    with pytest.raises(exception.InvalidMergeStrategyForParam):
        merge.merge_files({}, ["1", "2"], files)


def test_missing_environment_file():
    with pytest.raises(exception.StackValidationFailed) as info:
        merge.merge_files({}, ["nope.yaml"], {})
    assert "environment_files" in str(info.value)
