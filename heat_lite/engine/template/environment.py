"""The stack environment: user parameters, defaults and the registry."""

import yaml

from heat_lite.common import exception

SECTIONS = ("parameters", "parameter_defaults", "resource_registry",
            "event_sinks", "encrypted_param_names",
            "parameter_merge_strategies")


def parse(env):
    """Return a normalised environment dict with every section present.

    :param env: a mapping, a YAML/JSON string, or None.
    :raises StackValidationFailed: for unknown sections or bad types.
    """
    if env is None or env == "":
        env = {}
    if isinstance(env, str):
        try:
            env = yaml.safe_load(env) or {}
        except yaml.YAMLError as exc:
            raise exception.StackValidationFailed(
                msg="Error parsing environment: %s" % exc) from None
    if not isinstance(env, dict):
        raise exception.StackValidationFailed(
            msg="The environment is not a valid YAML mapping data type.")
    for section in env:
        if section not in SECTIONS:
            raise exception.StackValidationFailed(
                msg="environment has wrong section \"%s\"" % section)
    result = {
        "parameters": dict(env.get("parameters") or {}),
        "parameter_defaults": dict(env.get("parameter_defaults") or {}),
        "resource_registry": dict(env.get("resource_registry") or {}),
        "event_sinks": list(env.get("event_sinks") or []),
        "encrypted_param_names": list(env.get("encrypted_param_names")
                                      or []),
    }
    if env.get("parameter_merge_strategies"):
        result["parameter_merge_strategies"] = dict(
            env["parameter_merge_strategies"])
    return result
