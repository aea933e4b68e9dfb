"""Admin-only resource types (Heat's ``resource_types:`` rules)."""

import json

import pytest

from heat_lite import conf
from heat_lite.common import context, exception, policy
from heat_lite.engine import validation
from heat_lite.engine.endpoint import goals

INFO = {"name": "s", "id": "x", "project_id": "p"}


@pytest.fixture(autouse=True, scope="module")
def _parsed():
    conf.CONF([], project="heat_lite")
    policy.reset()
    yield
    policy.reset()


def _ctxt(*roles):
    return context.RequestContext(
        user_id="u",
        project_id="p",
        roles=list(roles),
        is_admin="admin" in roles,
        overwrite=False,
    )


def _bind(ctxt, rtype, environment=None):
    """Bind a one-resource template as create does (the properties are
    left out: the 403 comes before their 400, as in Heat)."""
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {"r": {"type": rtype}},
    }
    env = validation.environment(environment, None)
    return validation.bind(
        tmpl, env, {}, INFO, authorize=goals.types_checker(ctxt)
    )


@pytest.mark.parametrize(
    "rtype", ["OS::Nova::Flavor", "OS::Keystone::Project"]
)
def test_a_member_may_not_use_admin_types(rtype):
    with pytest.raises(exception.Forbidden) as err:
        _bind(_ctxt("member"), rtype)
    assert err.value.code == 403
    assert str(err.value).startswith(
        "You are not authorized to use resource_types:OS::"
    )
    # An admin gets past the policy (to the properties' own check).
    try:
        _bind(_ctxt("admin"), rtype)
    except exception.StackValidationFailed as exc:
        assert "Property" in str(exc)


def test_a_registry_alias_does_not_hide_an_admin_type():
    env = {"resource_registry": {"My::Flavor": "OS::Nova::Flavor"}}
    with pytest.raises(exception.Forbidden):
        _bind(_ctxt("member"), "My::Flavor", env)


def test_other_types_are_for_everyone():
    _bind(_ctxt("member"), "OS::Neutron::Net")
    policy.authorize_resource_types(
        _ctxt("member"), ["OS::Heat::None", "OS::Nova::Server"], "p"
    )


def test_an_admin_type_in_a_nested_template_is_refused_too():
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "inner": {"type": "inner.yaml"},
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {"type": "OS::Keystone::Role"},
                },
            },
        },
    }
    inner = {
        "heat_template_version": "2018-08-31",
        "resources": {"f": {"type": "OS::Nova::Flavor"}},
    }
    files = {"inner.yaml": json.dumps(inner)}
    env = validation.environment(None, None)
    with pytest.raises(exception.Forbidden) as err:
        validation.bind(
            tmpl,
            env,
            files,
            INFO,
            authorize=goals.types_checker(_ctxt("member")),
        )
    assert "resource_types:OS::" in str(err.value)
    del files["inner.yaml"]
    tmpl["resources"].pop("inner")
    with pytest.raises(exception.Forbidden) as err:
        validation.bind(
            tmpl,
            env,
            files,
            INFO,
            authorize=goals.types_checker(_ctxt("member")),
        )
    assert "resource_types:OS::Keystone::*" in str(err.value)
