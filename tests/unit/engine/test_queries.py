"""Selectors of stack queries: parsing, LIKE narrowing, value matching."""

import fnmatch

import pytest

from heat_lite.common import exception
from heat_lite.engine.endpoint import queries


@pytest.mark.parametrize(
    "glob, like",
    [
        ("app-*", "app-%"),
        ("a?b", "a_b"),
        ("50%_off", "50\\%\\_off"),
        ("x[ab]*", "x%"),
        ("*", "%"),
    ],
)
def test_like_of(glob, like):
    assert queries.like_of(glob) == like


@pytest.mark.parametrize("name", ["app-1", "a_b", "x[ab", "50%_off", "x"])
def test_like_never_loses_a_glob_match(name):
    """What the glob matches, its LIKE prefix matches too (checked by a
    tiny LIKE interpreter built on fnmatch)."""
    for glob in ("app-*", "a?b", "x[ab]*", "50%_off", "*"):
        if fnmatch.fnmatchcase(name, glob):
            like = queries.like_of(glob)
            pattern = (
                like.replace("\\%", "\0")
                .replace("\\_", "\1")
                .replace("%", "*")
                .replace("_", "?")
                .replace("\0", "%")
                .replace("\1", "_")
            )
            assert fnmatch.fnmatchcase(name, pattern), (name, glob, like)


def test_parse_defaults_resource_clause():
    sel = queries.parse({"resources": [{"properties": {"image": "php*"}}]})
    assert sel == {
        "resources": [
            {"type": "*", "name": "*", "properties": {"image": "php*"}}
        ]
    }


@pytest.mark.parametrize(
    "selector",
    [
        {},
        [],
        {"name": "x"},
        {"tags": []},
        {"status": "CREATE_COMPLETE"},
        {"parameters": {"p": ["a"]}},
        {"resources": [{}]},
        {"resources": [{"type": 1}]},
        {"resources": [{"properties": []}]},
    ],
)
def test_refused(selector):
    with pytest.raises(exception.InvalidSelector):
        queries.parse(selector)


def test_value_matching():
    match = queries._value_matches
    assert match("5.4.*", "5.4.10")
    assert match("5*", 5)
    assert not match("5*", True)
    assert not match("a*", {"a": 1})
    assert match({"a": 1}, {"a": 1})
    assert match(3, 3) and not match(3, "3")
