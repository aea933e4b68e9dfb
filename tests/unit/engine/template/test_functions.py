"""Function behaviour the corpus does not pin down: the Scope contract,
unbound resolution, version differences, limits and edge cases."""

import hashlib

import pytest

from heat_lite.common import exception
from heat_lite.engine.template import functions, versions


class RecordingScope(functions.Scope):
    """Remembers how functions call it."""

    def __init__(self, conditions=None, params=None):
        self.calls = []
        self.conditions = conditions or {}
        self.params = params or {}

    def attribute(self, resource_name, attribute, path):
        self.calls.append((resource_name, attribute, path))
        return {"b": ["x", "y"]} if attribute else {"all": True}

    def condition(self, name):
        return self.conditions[name]

    def param(self, name):
        if name in self.params:
            return self.params[name]
        return super().param(name)


def resolve(snippet, version="2021-04-16", scope=None, **context):
    return functions.resolve(
        functions.parse(snippet, version, "p", **context),
        scope or RecordingScope(),
    )


def test_get_attr_2013_selects_the_path_itself():
    scope = RecordingScope()
    value = resolve({"get_attr": ["r", "a", "b", 1]}, "2013-05-23", scope)
    assert value == "y"
    assert scope.calls == [("r", "a", ())]


def test_get_attr_later_versions_hand_the_path_to_the_scope():
    scope = RecordingScope()
    resolve({"get_attr": ["r", "a", "b", 1]}, "2014-10-16", scope)
    assert scope.calls == [("r", "a", ("b", 1))]


def test_get_attr_all_attributes_form():
    scope = RecordingScope()
    assert resolve({"get_attr": ["r"]}, "2015-10-15", scope) == {"all": True}
    assert scope.calls == [("r", None, ())]
    with pytest.raises(exception.StackValidationFailed):
        resolve({"get_attr": ["r"]}, "2015-04-30")


def test_get_attr_arguments_may_be_functions():
    scope = RecordingScope(params={"which": "a"})
    value = resolve(
        {"get_attr": ["r", {"get_param": "which"}, "b"]}, scope=scope
    )
    assert value is not None
    assert scope.calls == [("r", "a", ("b",))]


def test_dependencies_inside_any_function():
    parsed = functions.parse(
        {
            "a": {
                "list_join": [
                    ",",
                    [
                        {
                            "str_replace": {
                                "template": "x",
                                "params": {"x": {"get_resource": "deep"}},
                            }
                        }
                    ],
                ]
            },
            "b": [{"get_attr": ["other", {"get_attr": ["third", "k"]}]}],
        },
        "2018-08-31",
    )
    assert set(functions.dependencies(parsed)) == {"deep", "other", "third"}


def test_parse_accepts_an_old_style_function_set():
    parsed = functions.parse(
        {"digest": ["md5", "x"]}, versions.FUNCTIONS["2015-04-30"]
    )
    assert isinstance(parsed, functions.Function)


def test_unbound_if_asks_the_scope_for_conditions():
    snippet = {
        "k": {"if": ["c", "yes", "no"]},
        "gone": {"if": ["c", "kept"]},
        "list": [1, {"if": ["c", 2]}, 3],
    }
    assert resolve(snippet, scope=RecordingScope({"c": True})) == {
        "k": "yes",
        "gone": "kept",
        "list": [1, 2, 3],
    }
    assert resolve(snippet, scope=RecordingScope({"c": False})) == {
        "k": "no",
        "list": [1, 3],
    }


def test_removed_value_at_the_top_is_none():
    assert resolve({"if": [False, "x"]}) is None


def test_default_scope_errors():
    with pytest.raises(exception.UserParameterMissing):
        resolve({"get_param": "nope"})
    with pytest.raises(exception.StackValidationFailed) as info:
        resolve({"get_file": "x.txt"})
    assert "p: No content found" in str(info.value)
    assert resolve({"resource_facade": "metadata"}) is None
    assert resolve({"get_resource": "r"}) == "r"


def test_str_replace_with_many_params_does_not_recurse():
    params = {"$k%d$" % i: str(i) for i in range(5000)}
    text = "".join("$k%d$" % i for i in range(0, 5000, 1000))
    assert (
        resolve({"str_replace": {"template": text, "params": params}})
        == "01000200030004000"
    )


def test_str_replace_pre_2015_rejects_maps():
    with pytest.raises(exception.StackValidationFailed) as info:
        resolve(
            {"str_replace": {"template": "x", "params": {"x": {}}}},
            "2015-04-30",
        )
    assert "params must be strings or numbers" in str(info.value)


def test_list_join_pre_2015_takes_one_list():
    with pytest.raises(exception.StackValidationFailed):
        resolve({"list_join": [",", ["a"], ["b"]]}, "2015-04-30")
    assert resolve({"list_join": [",", ["a"], ["b"]]}) == "a,b"


def test_repeat_maps_only_from_newton():
    snippet = {"repeat": {"for_each": {"X": {"a": 1}}, "template": "X"}}
    assert resolve(snippet, "2016-10-14") == ["a"]
    with pytest.raises(exception.StackValidationFailed):
        resolve(snippet, "2016-04-08")


def test_repeat_output_is_bounded():
    snippet = {
        "repeat": {
            "for_each": {"%%%d" % i: list(range(10)) for i in range(6)},
            "template": "x",
        }
    }
    with pytest.raises(exception.StackValidationFailed) as info:
        resolve(snippet)
    assert "would produce" in str(info.value)


def test_permutations_only_from_pike():
    snippet = {
        "repeat": {
            "for_each": {"X": ["a"]},
            "template": "X",
            "permutations": "no",
        }
    }
    with pytest.raises(exception.StackValidationFailed):
        resolve(snippet, "2017-09-01")
    assert resolve(snippet, "2017-02-24") == ["a"]


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha256", "sha512"])
def test_digest(algorithm):
    expected = hashlib.new(algorithm, b"data").hexdigest()
    assert resolve({"digest": [algorithm, "data"]}) == expected


def test_yaql_errors_are_typed():
    for expression in ("1 / 0", "range(0, 1000000).list()"):
        with pytest.raises(exception.StackValidationFailed):
            resolve({"yaql": {"expression": expression, "data": {}}})
    assert resolve(
        {"yaql": {"expression": "$.data.select($ * 2)", "data": [1, 2]}}
    ) == [2, 4]


def test_map_replace_leaves_unhashable_values():
    assert resolve({"map_replace": [{"a": [1]}, {"values": {"x": "y"}}]}) == {
        "a": [1]
    }


def test_list_concat_unique_keeps_the_last_copy():
    assert resolve({"list_concat_unique": [[1, 2], [1, 3], [2]]}) == [1, 3, 2]


def test_make_url_bracketed_ipv6_and_scheme_check():
    assert (
        resolve({"make_url": {"scheme": "http", "host": "[::1]"}})
        == "http://[::1]"
    )
    with pytest.raises(exception.StackValidationFailed):
        resolve({"make_url": {"scheme": "ht:tp"}})


def test_contains_on_strings_and_lists():
    assert resolve({"contains": ["b", "abc"]}) is True
    assert resolve({"contains": [{"a": 1}, [{"a": 1}]]}) is True
    with pytest.raises(exception.StackValidationFailed):
        resolve({"contains": [1, 5]})


def test_condition_functions_resolve_with_names_and_booleans():
    scope = RecordingScope({"yes": True, "no": False})
    assert (
        resolve(
            {"and": ["yes", True]},
            scope=scope,
            condition_names={"yes", "no"},
            in_condition=True,
        )
        is True
    )
    assert (
        resolve({"or": ["no", {"not": "yes"}]}, scope=scope, in_condition=True)
        is False
    )


def test_every_function_has_a_class_and_a_description():
    for name in versions.ALL_FUNCTIONS:
        assert functions.describe(name), name
