"""Stored templates as the engine binds them (``engine.definitions``)."""

from heat_lite.engine import definitions


def test_an_empty_template_stored_with_parameter_values_still_binds():
    """Rows a create's rollback stored before 2026-12-05: the empty
    template with the create's parameter values. Binding them dropped
    nothing and failed (UnknownUserParameter); they bind now, and a
    template that declares its parameters keeps their values."""
    empty = {"heat_template_version": "2018-08-31"}
    env = {"parameters": {"image": "one"}, "parameter_defaults": {"x": 1}}
    row = {"template": empty, "environment": env, "files": {}}
    assert definitions._stored_environment(row) == dict(env, parameters={})
    declared = dict(empty, parameters={"image": {"type": "string"}})
    row = {"template": declared, "environment": env, "files": {}}
    assert definitions._stored_environment(row) is env
