"""Resolving resource types, hooks and restricted actions."""

import pytest

from heat_lite.common import exception
from heat_lite.engine.template import registry

ENV = {
    "resource_registry": {
        "OS::Alias": "OS::Middle",
        "OS::Middle": "OS::Heat::None",
        "OS::Nova::*": "OS::Heat::None",
        "OS::Net*": "OS::Neutron*",
        "My::Server": "server.yaml",
        "OS::Gone": None,
        "resources": {
            "web": {
                "OS::Alias": "OS::Heat::TestResource",
                "hooks": "pre-create",
            },
            "*_server": {
                "hooks": ["pre-update", "post-delete"],
                "restricted_actions": "replace",
            },
            "group": {"member": {"hooks": "pre-delete"}},
        },
    }
}


@pytest.mark.parametrize(
    "name, type_name, expected",
    [
        (None, "OS::Alias", "OS::Heat::None"),
        ("other", "OS::Alias", "OS::Heat::None"),
        ("web", "OS::Alias", "OS::Heat::TestResource"),
        (None, "OS::Nova::Server", "OS::Heat::None"),
        (None, "OS::NetworkThing", "OS::NeutronworkThing"),
        (None, "My::Server", "server.yaml"),
        (None, "OS::Gone", "OS::Gone"),
        (None, "OS::Unmapped", "OS::Unmapped"),
        (None, "local.yaml", "local.yaml"),
    ],
)
def test_resolve_type(name, type_name, expected):
    assert registry.resolve_type(ENV, name, type_name) == expected


def test_is_template():
    assert registry.is_template("a/b.yaml")
    assert registry.is_template("x.template")
    assert not registry.is_template("OS::Heat::None")


def test_alias_loops_are_errors():
    env = {"resource_registry": {"A::A": "B::B", "B::B": "A::A"}}
    with pytest.raises(exception.StackValidationFailed) as info:
        registry.resolve_type(env, None, "A::A")
    assert "A::A -> B::B -> A::A" in str(info.value)


def test_hooks_and_restrictions_match_names_and_globs():
    assert registry.hooks(ENV, "web") == {"pre-create"}
    assert registry.hooks(ENV, "db_server") == {"pre-update", "post-delete"}
    assert registry.hooks(ENV, "other") == set()
    assert registry.restricted_actions(ENV, "db_server") == {"replace"}
    assert registry.restricted_actions(ENV, "web") == set()


def test_nested_environment():
    env = dict(ENV, parameters={"p": 1}, parameter_defaults={"d": 2})
    nested = registry.nested_environment(env, "group")
    assert nested["parameters"] == {}
    assert nested["parameter_defaults"] == {"d": 2}
    assert nested["resource_registry"]["resources"] == {
        "member": {"hooks": "pre-delete"}
    }
    assert nested["resource_registry"]["OS::Alias"] == "OS::Middle"
    assert registry.hooks(nested, "member") == {"pre-delete"}
