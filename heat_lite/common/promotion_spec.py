"""The body of ``POST /promotions``, checked (pure: the API refuses a
malformed one with 400 and the engine checks it again)::

    {"source": {"stack": "app1-test"},
     "target": {"stack": "app1-prod", "project": "prod"},
     "parameters": {"flavor": "large"},
     "environment": {"parameter_defaults": {"replicas": 3}},
     "reset_parameters": ["debug"],
     "verify": {"timeout": 600, "checks": [{"type": "signal"}]}}
"""

from heat_lite.common import exception, verify_spec

KEYS = (
    "source",
    "target",
    "parameters",
    "environment",
    "reset_parameters",
    "verify",
)


def _invalid(reason):
    return exception.InvalidPromotion(reason=reason)


def _stack_ref(value, where, extra=()):
    if not isinstance(value, dict):
        raise _invalid("%s must be a map" % where)
    unknown = sorted(set(value) - {"stack", *extra})
    if unknown:
        raise _invalid("%s: unknown key %s" % (where, ", ".join(unknown)))
    stack = value.get("stack")
    if not isinstance(stack, str) or not stack or len(stack) > 255:
        raise _invalid("%s.stack must name a stack (name or id)" % where)
    return value


def parse(body):
    """The normalised request.

    :raises InvalidPromotion: for a malformed body.
    :raises InvalidVerify: for a malformed ``verify``.
    """
    if not isinstance(body, dict):
        raise _invalid("the body must be a map")
    unknown = sorted(set(body) - set(KEYS))
    if unknown:
        raise _invalid("unknown key %s" % ", ".join(unknown))
    source = _stack_ref(body.get("source"), "source")
    target = _stack_ref(body.get("target"), "target", ("project",))
    project = target.get("project")
    if project is not None and (not isinstance(project, str) or not project):
        raise _invalid("target.project must be a project id")
    for key in ("parameters", "environment"):
        if not isinstance(body.get(key, {}), dict):
            raise _invalid("%s must be a map" % key)
    reset = body.get("reset_parameters", [])
    if not isinstance(reset, list) or not all(
        isinstance(r, str) and r for r in reset
    ):
        raise _invalid("reset_parameters must be a list of names")
    verify = body.get("verify")
    return {
        "source": {"stack": source["stack"]},
        "target": {"stack": target["stack"], "project": project},
        "parameters": dict(body.get("parameters") or {}),
        "environment": dict(body.get("environment") or {}),
        "reset_parameters": sorted(set(reset)),
        "verify": verify_spec.parse(verify) if verify is not None else None,
    }


def overlay(environment, spec, declared):
    """The source's ``environment`` with the request's overlay laid over
    it: reset parameters dropped (they take the template's defaults),
    then ``parameters`` and every ``environment`` section merged in.

    :param declared: the parameter names the template declares.
    :raises InvalidPromotion: if a reset parameter is not declared.
    """
    unknown = sorted(set(spec["reset_parameters"]) - set(declared))
    if unknown:
        raise _invalid(
            "reset_parameters: the template declares no parameter %s"
            % ", ".join(unknown)
        )
    env = {
        k: dict(v) if isinstance(v, dict) else v
        for k, v in environment.items()
    }
    for name in spec["reset_parameters"]:
        for section in ("parameters", "parameter_defaults"):
            env.get(section, {}).pop(name, None)
    for section, value in spec["environment"].items():
        if isinstance(value, dict) and isinstance(env.get(section), dict):
            env[section].update(value)
        else:
            env[section] = value
    env.setdefault("parameters", {}).update(spec["parameters"])
    return env
