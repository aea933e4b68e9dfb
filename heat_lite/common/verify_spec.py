"""The ``verify`` document of a verified create or update, checked.

Pure: the API checks a request's ``verify`` with it (a malformed one is a
400) and the engine checks it again for any other RPC caller. The
normalised form is what the engine stores::

    {"timeout": 600,
     "checks": [{"type": "output", "output": "healthy", "equals": true},
                {"type": "signal"}]}
"""

import json

from heat_lite.common import exception

DEFAULT_TIMEOUT = 600
MAX_TIMEOUT = 7 * 24 * 3600
MAX_CHECKS = 20
_CHECK_KEYS = {
    "output": {"type", "output", "equals"},
    "signal": {"type"},
}
VERDICTS = ("PASS", "FAIL")


def _invalid(reason):
    return exception.InvalidVerify(reason=reason)


def _timeout(value):
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid("timeout must be an integer number of seconds")
    if not 1 <= value <= MAX_TIMEOUT:
        raise _invalid("timeout must be between 1 and %d" % MAX_TIMEOUT)
    return value


def _check(index, check):
    where = "checks[%d]" % index
    if not isinstance(check, dict):
        raise _invalid("%s must be a map" % where)
    kind = check.get("type")
    if kind not in _CHECK_KEYS:
        raise _invalid(
            "%s.type must be one of %s"
            % (where, ", ".join(sorted(_CHECK_KEYS)))
        )
    unknown = sorted(set(check) - _CHECK_KEYS[kind])
    if unknown:
        raise _invalid("%s: unknown key %s" % (where, ", ".join(unknown)))
    if kind == "output":
        if not isinstance(check.get("output"), str) or not check["output"]:
            raise _invalid("%s.output must name an output" % where)
        if "equals" not in check:
            raise _invalid("%s.equals is required" % where)
        return {
            "type": kind,
            "output": check["output"],
            "equals": check["equals"],
        }
    return {"type": kind}


def parse(spec):
    """Return the normalised ``verify`` document.

    :raises InvalidVerify: if it is not a map with a ``checks`` list of
        known checks and an optional integer ``timeout`` (seconds).
    """
    if not isinstance(spec, dict):
        raise _invalid("verify must be a map")
    unknown = sorted(set(spec) - {"timeout", "checks"})
    if unknown:
        raise _invalid("unknown key %s" % ", ".join(unknown))
    checks = spec.get("checks")
    if not isinstance(checks, list) or not checks:
        raise _invalid("checks must be a non-empty list")
    if len(checks) > MAX_CHECKS:
        raise _invalid("at most %d checks" % MAX_CHECKS)
    return {
        "timeout": _timeout(spec.get("timeout")),
        "checks": [_check(i, c) for i, c in enumerate(checks)],
    }


def describe(check):
    """A check in a few words, for reasons and events."""
    if check["type"] == "output":
        return "output %s == %s" % (
            check["output"],
            describe_value(check["equals"]),
        )
    return "signal"


def describe_value(value):
    """A JSON value as the user wrote it."""
    return json.dumps(value, sort_keys=True)


def verdict(status, reason):
    """Check a signalled verdict; return (status, reason).

    :raises InvalidVerify: on a status other than PASS / FAIL.
    """
    if status not in VERDICTS:
        raise _invalid("verdict status must be PASS or FAIL")
    if reason is not None and not isinstance(reason, str):
        raise _invalid("verdict reason must be a string")
    return status, (reason or "")[:1000]
