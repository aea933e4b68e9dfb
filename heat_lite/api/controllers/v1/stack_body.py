"""Parsing the body of a stack create, update, preview or validate.

Checks types and shapes only (what a malformed request gets as 400);
what the values mean is the engine's business.
"""

from heat_lite import conf
from heat_lite.common import exception, states, template_format, verify_spec

CONF = conf.CONF
CREATE_KEYS = (
    "stack_name",
    "template",
    "template_url",
    "parameters",
    "environment",
    "environment_files",
    "files",
    "files_container",
    "timeout_mins",
    "disable_rollback",
    "tags",
    "adopt_stack_data",
    "timeout",
    "verify",
    # heat_lite's own: converge (default), queue or reject.
    "update_semantics",
)
UPDATE_KEYS = CREATE_KEYS + (
    "clear_parameters",
    "converge",
    "existing",
    # heat_lite's own: put drifted resources back (engine.drift.revert).
    "revert_drift",
)
VALIDATE_KEYS = (
    "template",
    "template_url",
    "parameters",
    "environment",
    "environment_files",
    "files",
    "files_container",
)


def _parse_template_text(text):
    return template_format.parse(
        text,
        CONF.max_template_size,
        "Template",
        exception.StackValidationFailed,
    )


def check_keys(body, allowed):
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise exception.Invalid(
            message="Unknown attribute: %s"
            % ", ".join(str(k) for k in unknown)
        )


def snapshot_name(body):
    """A snapshot's ``name``: a string of at most 255 characters, or
    absent (the engine names it)."""
    name = _typed(body, "name", str, "a string")
    if name is not None and len(name) > 255:
        raise exception.Invalid(message="name is longer than 255 characters")
    return name


def _typed(body, key, types, what):
    value = body.get(key)
    if value is not None and not isinstance(value, types):
        raise exception.Invalid(message="%s must be %s" % (key, what))
    return value


def template(body, required=True):
    """The template object of a request (text is parsed)."""
    value = body.get("template")
    if value is None and body.get("template_url"):
        raise exception.NotSupported(feature="template_url")
    if value is None:
        if required:
            raise exception.BadRequest(message="No template specified")
        return None
    if isinstance(value, str):
        value = _parse_template_text(value)
    if not isinstance(value, dict):
        raise exception.InvalidTemplateVersion(
            explanation="Template format version not found."
        )
    return value


def sources(body):
    """(parameters, files, environment, environment_files), checked."""
    params = _typed(body, "parameters", dict, "a map") or {}
    files = _typed(body, "files", dict, "a map") or {}
    if any(not isinstance(v, str) for v in files.values()):
        raise exception.Invalid(message="files must map names to strings")
    environment = _typed(
        body, "environment", (dict, str), "a map or a YAML document"
    )
    env_files = _typed(body, "environment_files", list, "a list")
    if env_files and any(not isinstance(f, str) for f in env_files):
        raise exception.Invalid(
            message="environment_files must be a list of strings"
        )
    return params, files, environment, env_files


def _bool(body, key):
    value = body[key]
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise exception.Invalid(message="%s must be a boolean" % key)
        return value.lower() == "true"
    if not isinstance(value, (bool, int)):
        raise exception.Invalid(message="%s must be a boolean" % key)
    return bool(value)


def existing(body):
    """A plan's ``existing`` (a PATCH update when true), checked."""
    return body.get("existing") is not None and _bool(body, "existing")


def _timeout(value):
    try:
        timeout = int(value)
        if isinstance(value, (bool, float)) or timeout > 2**31:
            raise ValueError(value)
    except (TypeError, ValueError):
        raise exception.Invalid(
            message="Invalid timeout value %s" % value
        ) from None
    if timeout < 0:
        raise exception.Invalid(message="Invalid timeout value %s" % value)
    return timeout or None


def _tags(tags):
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    if tags is not None and (
        not isinstance(tags, list)
        or any(not isinstance(t, str) or len(t) > 80 or "," in t for t in tags)
    ):
        raise exception.Invalid(
            message="Invalid tags: each tag must be a "
            "string of at most 80 characters without "
            "commas"
        )
    return tags or None


def args(body, update=False):
    """Stack options of a create or update body, checked."""
    result = {}
    if body.get("timeout_mins") is not None:
        result["timeout_mins"] = _timeout(body["timeout_mins"])
    elif body.get("timeout") is not None:
        # ``openstack stack adopt --timeout`` sends this key.
        result["timeout_mins"] = _timeout(body["timeout"])
    if body.get("disable_rollback") is not None:
        result["disable_rollback"] = _bool(body, "disable_rollback")
    if "tags" in body:
        result["tags"] = _tags(body["tags"])
    if body.get("clear_parameters") is not None:
        clear = body["clear_parameters"]
        if not isinstance(clear, list) or any(
            not isinstance(c, str) for c in clear
        ):
            raise exception.Invalid(
                message="clear_parameters must be a list of parameter names"
            )
        result["clear_parameters"] = clear
    if body.get("verify") is not None:
        # Checked here (400) and again by the engine, for other callers.
        result["verify"] = verify_spec.parse(body["verify"])
    if body.get("converge") is not None:
        if not update:
            raise exception.Invalid(
                message="converge is only allowed on update"
            )
        result["converge"] = _bool(body, "converge")
    if body.get("revert_drift") is not None:
        if not update:
            raise exception.Invalid(
                message="revert_drift is only allowed on update"
            )
        if _bool(body, "revert_drift"):
            result["revert_drift"] = True
    if body.get("update_semantics") is not None:
        result["update_semantics"] = update_semantics(body["update_semantics"])
    return result


def update_semantics(value):
    """A checked ``update_semantics`` (``states.UPDATE_SEMANTICS``).

    :raises Invalid: (400) for any other value.
    """
    if value not in states.UPDATE_SEMANTICS:
        raise exception.Invalid(
            message="update_semantics must be one of %s"
            % ", ".join(states.UPDATE_SEMANTICS)
        )
    return value


def adopt_data(body):
    """The adopt data of a create body, or None; adopt needs
    ``[DEFAULT] enable_stack_adopt``."""
    data = body.get("adopt_stack_data")
    if data is None:
        return None
    if not CONF.enable_stack_adopt:
        raise exception.feature_disabled("Stack Adopt", "enable_stack_adopt")
    if isinstance(data, str):
        try:
            data = template_format.loads_json(data)
        except ValueError:
            raise exception.Invalid(
                message="Invalid adopt data: %s" % data[:100]
            ) from None
    if not isinstance(data, dict):
        raise exception.Invalid(message="Invalid adopt data")
    return data
