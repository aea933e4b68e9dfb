"""The document ``POST /v1/{project}/validate`` returns, as Heat shapes it.

``document(template, environment)`` describes a parsed template's
parameters (``Type``, ``Default``, ``NoEcho``, ``Label``, ``Description``,
the constraints under Heat's CFN-style names, ``Value`` when the
environment gives one), its ``ParameterGroups`` and the ``Environment``.
Values the environment gives must name declared parameters but, as in
Heat's validate, need not fit them; hidden ones are shown as ``******``.
"""

import copy

from heat_lite.common import exception
from heat_lite.engine.template import constraints
from heat_lite.engine.template import environment as env_mod
from heat_lite.engine.template import parameters as params_mod


def _constraint_keys(param):
    """Heat's keys for the constraints of one parameter."""
    result, descriptions = {}, []
    for c in param.constraints:
        if isinstance(c, constraints.Length):
            _bounds(result, c, "MinLength", "MaxLength")
        elif isinstance(c, constraints.Range):
            _bounds(result, c, "MinValue", "MaxValue")
        elif isinstance(c, constraints.Modulo):
            result["Step"], result["Offset"] = c.step, c.offset
        elif isinstance(c, constraints.AllowedValues):
            result["AllowedValues"] = list(c.allowed)
        elif isinstance(c, constraints.AllowedPattern):
            result["AllowedPattern"] = c.spec
        elif isinstance(c, constraints.CustomConstraint):
            result["CustomConstraint"] = c.spec
        if c.description:
            descriptions.append(c.description)
    if descriptions:
        result["ConstraintDescription"] = " ".join(descriptions)
    return result


def _bounds(result, constraint, min_key, max_key):
    if constraint.min is not None:
        result[min_key] = constraint.min
    if constraint.max is not None:
        result[max_key] = constraint.max


def describe_parameter(param, env):
    """One entry of ``Parameters`` in the validate document."""
    doc = {
        "Type": param.api_type(),
        "Description": param.description,
        "NoEcho": "true" if param.hidden else "false",
        "Label": param.label if param.label is not None else param.name,
    }
    default = env["parameter_defaults"].get(param.name)
    if default is None and param.has_default:
        default = param.schema.get("default")
    if default is not None:
        doc["Default"] = copy.deepcopy(default)
    value = env["parameters"].get(param.name)
    if value is not None:
        doc["Value"] = (
            params_mod.HIDDEN_VALUE if param.hidden else copy.deepcopy(value)
        )
    if param.tags:
        doc["Tags"] = list(param.tags)
    doc.update(_constraint_keys(param))
    return doc


def _check_names(template, env):
    """Every value the environment gives names a declared parameter.

    As Heat's validate (not strict), values are not checked against their
    parameter's type and constraints, and missing ones are fine: a form
    built from this document asks for them (Horizon's Launch Stack).
    """
    for name in env["parameters"]:
        if name not in template.parameters:
            raise exception.UnknownUserParameter(key=name)


def document(template, environment=None):
    """Heat's validate document for a parsed template.

    :param template: a ``hot.Template``.
    :param environment: an environment in any form ``environment.parse``
        accepts.
    :raises UnknownUserParameter: for a value of an undeclared parameter.
    """
    env = env_mod.parse(environment)
    _check_names(template, env)
    hidden = {n for n, p in template.parameters.items() if p.hidden}
    shown_env = env_mod.masked(env, hidden)
    result = {
        "Description": template.description,
        "Parameters": {
            name: describe_parameter(param, env)
            for name, param in template.parameters.items()
        },
        "Environment": {
            "parameters": shown_env["parameters"],
            "parameter_defaults": shown_env["parameter_defaults"],
            "resource_registry": dict(
                {"resources": {}}, **shown_env["resource_registry"]
            ),
            "event_sinks": shown_env["event_sinks"],
        },
    }
    if template.parameter_groups:
        result["ParameterGroups"] = copy.deepcopy(template.parameter_groups)
    return result
