"""The body of a rollout create, checked (pure).

The API checks a request with it (a malformed one is a 400) and the
engine checks it again for any other RPC caller. The normalised form is
what the engine stores::

    {"name": "php-5.4.46",
     "selector": {...},                      # engine.queries
     "update": {"parameters": {...}, ...},   # a PATCH of each target
     "verify": {...},                        # common.verify_spec
     "strategy": {"canary": 1, "batch_size": 10, "max_failures": 2}}
"""

from heat_lite import conf
from heat_lite.common import exception, template_format, verify_spec

CONF = conf.CONF
KEYS = ("name", "selector", "update", "verify", "strategy")
UPDATE_KEYS = (
    "parameters",
    "template",
    "files",
    "environment",
    "clear_parameters",
)
# (key, default, minimum) of the strategy.
STRATEGY = (("canary", 0, 0), ("batch_size", 1, 1), ("max_failures", 0, 0))
MAX_NAME = 255


def _invalid(reason):
    return exception.InvalidRollout(reason=reason)


def _unknown(where, given, allowed):
    unknown = sorted(str(k) for k in set(given) - set(allowed))
    if unknown:
        raise _invalid(
            "unknown key(s) in %s: %s" % (where, ", ".join(unknown))
        )


def _strategy(value):
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise _invalid("strategy must be a map")
    _unknown("strategy", value, [k for k, _d, _m in STRATEGY])
    result = {}
    for key, default, minimum in STRATEGY:
        number = value.get(key, default)
        if isinstance(number, bool) or not isinstance(number, int):
            raise _invalid("strategy.%s must be an integer" % key)
        if number < minimum:
            raise _invalid("strategy.%s must be at least %d" % (key, minimum))
        result[key] = number
    return result


def _update(value):
    if not isinstance(value, dict) or not value:
        raise _invalid("update must be a non-empty map")
    _unknown("update", value, UPDATE_KEYS)
    result = dict(value)
    for key in ("parameters", "files"):
        if not isinstance(result.get(key, {}), dict):
            raise _invalid("update.%s must be a map" % key)
    if any(not isinstance(v, str) for v in result.get("files", {}).values()):
        raise _invalid("update.files must map names to strings")
    env = result.get("environment")
    if env is not None and not isinstance(env, (dict, str)):
        raise _invalid("update.environment must be a map or a YAML document")
    clear = result.get("clear_parameters", [])
    if not isinstance(clear, list) or any(
        not isinstance(c, str) for c in clear
    ):
        raise _invalid("update.clear_parameters must be a list of names")
    template = result.get("template")
    if isinstance(template, str):
        template = result["template"] = template_format.parse(
            template,
            CONF.max_template_size,
            "Template",
            exception.StackValidationFailed,
        )
    if template is not None and not isinstance(template, dict):
        raise _invalid("update.template must be a template")
    return result


def parse(body):
    """The checked, normalised rollout request.

    :raises InvalidRollout: (400) if it is malformed.
    :raises InvalidVerify: (400) if its ``verify`` is.
    """
    if not isinstance(body, dict):
        raise _invalid("the body must be a map")
    _unknown("the rollout", body, KEYS)
    name = body.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        raise _invalid("name must be a string of 1 to %d chars" % MAX_NAME)
    selector = body.get("selector")
    if not isinstance(selector, dict) or not selector:
        raise _invalid("selector must be a non-empty map")
    if body.get("verify") is None:
        raise _invalid("verify is required: it decides each target")
    return {
        "name": name,
        "selector": selector,
        "update": _update(body.get("update")),
        "verify": verify_spec.parse(body["verify"]),
        "strategy": _strategy(body.get("strategy")),
    }


def batches(count, strategy):
    """The batch number of each of ``count`` targets, in order: the first
    ``canary`` form batch 0 of their own, then ``batch_size`` a batch."""
    canary = min(strategy["canary"], count)
    first = 1 if canary else 0
    return [0] * canary + [
        first + i // strategy["batch_size"] for i in range(count - canary)
    ]
