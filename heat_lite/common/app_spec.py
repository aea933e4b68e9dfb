"""The body of an app create or update, checked (doc/specs/apps.md).

Pure but for the configuration: the API refuses a malformed body with a
400 and the engine checks it again for any other RPC caller. The
normalised form is what the engine stores (the secret apart, which the
engine encrypts before storing and never returns)::

    {"name": "shop",
     "source": {"url": "https://git.example.com/shop.git",
                "branches": ["main", "release/*"]},
     "builder": {"name": "artifact", "options": {...}},
     "template": {...}, "files": {...}, "environment": {...},
     "image_parameter": "image",
     "stacks": {"main": "shop-prod"},     # adopted stacks, by branch
     "verify": {...} or None,             # common.verify_spec
     "retention": {"keep_last": 3, "grace": 86400, "mode": "delete"}
                  or None,                # the project's default, then
                                          # the [retention] options
     "webhook_secret": "..." or None}

An update (PATCH) is the stored app with the given keys laid over it,
checked as a whole again (``merge``), so a template that drops the image
parameter is refused as on create.
"""

import contextlib
import fnmatch
import json
import re

from heat_lite import builders, conf
from heat_lite.apps import refs, sources
from heat_lite.builders import base as builder_base
from heat_lite.common import crypt, exception, template_format, verify_spec
from heat_lite.conf import retention as retention_conf

CONF = conf.CONF
KEYS = (
    "name",
    "source",
    "builder",
    "template",
    "files",
    "environment",
    "image_parameter",
    "stacks",
    "verify",
    "retention",
    "webhook_secret",
)
REQUIRED = ("name", "source", "builder", "template", "image_parameter")
# Heat's stack name rule: an app names its stacks after itself.
_NAME_RE = re.compile(r"\A[a-zA-Z][a-zA-Z0-9_.-]{0,254}\Z")
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_.-]")
MAX_NAME = 255
MAX_BRANCHES = 50
# What a list of apps may be sorted by.
SORT_KEYS = ("name", "created_at", "updated_at")
MIN_SECRET = 16
MAX_SECRET = 1024


def _invalid(reason):
    return exception.InvalidApp(reason=reason)


@contextlib.contextmanager
def _as_invalid():
    """The 400s of ``apps.sources`` and ``builders`` as InvalidApp: only
    ``common.exception``'s classes cross RPC as themselves."""
    try:
        yield
    except (
        sources.SourceNotAllowed,
        builders.UnknownBuilder,
        builder_base.InvalidBuildOptions,
    ) as exc:
        raise _invalid(str(exc)) from None


def _name(value, what):
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise _invalid(
            '%s must contain only alphanumeric or "_-." characters, must '
            "start with alpha and must be 255 characters or less" % what
        )
    return value


def _branch_pattern(pattern):
    """Whether ``refs/heads/<pattern>`` is a valid ref once its fnmatch
    wildcards (``*``, ``?``, ``[...]``) stand for plain characters."""
    if not isinstance(pattern, str) or not pattern:
        return False
    if pattern.startswith("-"):
        return False  # git refuses such branch names: an option to it
    plain = re.sub(r"\[[^\]/]+\]", "x", pattern)
    plain = plain.replace("*", "x").replace("?", "x")
    return refs.is_valid_ref(refs.BRANCH_PREFIX + plain)


def _map(value, where, keys):
    if not isinstance(value, dict):
        raise _invalid(
            "%s must be a map with %s" % (where, " and ".join(keys))
        )
    unknown = sorted(str(k) for k in set(value) - set(keys))
    if unknown:
        raise _invalid("%s: unknown key %s" % (where, ", ".join(unknown)))
    return value


def _source(value):
    _map(value, "source", ("url", "branches"))
    url = value.get("url")
    with _as_invalid():
        sources.check_source(url, CONF.apps.allowed_sources)
    branches = value.get("branches")
    if not isinstance(branches, list) or not branches:
        raise _invalid("source.branches must be a non-empty list")
    if len(branches) > MAX_BRANCHES:
        raise _invalid("source.branches: at most %d patterns" % MAX_BRANCHES)
    for pattern in branches:
        if not _branch_pattern(pattern):
            raise _invalid(
                "source.branches: %r is not a branch name or pattern"
                % (pattern,)
            )
    return {"url": url, "branches": list(dict.fromkeys(branches))}


def _builder(value):
    _map(value, "builder", ("name", "options"))
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid("builder.name must name a builder")
    with _as_invalid():
        builder = builders.get_builder(name, CONF.apps)
        options = builder.validate_options(value.get("options"))
    return {"name": name, "options": options}


def _document(value, what, required):
    """A template or environment: a map, or YAML/JSON text of one."""
    if value is None:
        if required:
            raise _invalid("%s is required" % what)
        return {}
    if isinstance(value, str):
        value = template_format.parse(
            value,
            CONF.max_template_size,
            what.capitalize(),
            exception.StackValidationFailed,
        )
    if not isinstance(value, dict):
        raise _invalid("%s must be a map" % what)
    template_format.check_size(
        json.dumps(value), CONF.max_template_size, what.capitalize()
    )
    return value


def _files(value):
    if value is None:
        return {}
    if not isinstance(value, dict) or any(
        not isinstance(k, str) or not isinstance(v, str)
        for k, v in value.items()
    ):
        raise _invalid("files must map names to strings")
    for name, text in value.items():
        template_format.check_size(text, CONF.max_template_size, name)
    return dict(value)


def _declared(template):
    params = template.get("parameters", template.get("Parameters"))
    return set(params) if isinstance(params, dict) else set()


def _stacks(value, branches):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid("stacks must map branch names to stack names")
    result = {}
    for branch, stack in value.items():
        if (
            not isinstance(branch, str)
            or branch.startswith("-")
            or not refs.is_valid_ref(refs.BRANCH_PREFIX + branch)
        ):
            raise _invalid("stacks: %r is not a branch name" % (branch,))
        if not follows(branches, branch):
            raise _invalid(
                "stacks: branch %s is not one source.branches follows" % branch
            )
        result[branch] = _name(stack, "stacks.%s" % branch)
    return result


def _secret(value):
    if value is None:
        return None
    if not isinstance(value, str) or not (
        MIN_SECRET <= len(value) <= MAX_SECRET
    ):
        raise _invalid(
            "webhook_secret must be a string of %d to %d characters"
            % (MIN_SECRET, MAX_SECRET)
        )
    if not crypt.enabled():
        raise _invalid(
            "webhook_secret needs [DEFAULT] auth_encryption_key set by the "
            "operator (the secret is stored encrypted)"
        )
    return value


def _retention(value):
    """An app's image retention (doc/specs/image_retention.md): any of
    keep_last, grace (seconds), mode; what it leaves out follows the
    project's default, then the ``[retention]`` options, when the pass
    runs."""
    return check_retention(value, _invalid)


def check_retention(value, invalid):
    """``value`` (None, or a map of any of keep_last, grace, mode)
    checked: the one validation of an app's retention and of a
    project's default (``db.retention_defaults``).

    :param invalid: ``invalid(reason)`` -> the exception to raise.
    :returns: the keys given, checked (None for None).
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid("retention must be a map")
    unknown = sorted(str(k) for k in set(value) - set(RETENTION_KEYS))
    if unknown:
        raise invalid("retention: unknown key %s" % ", ".join(unknown))
    checked = {}
    for key in ("keep_last", "grace"):
        if key in value:
            number = value[key]
            if (
                isinstance(number, bool)
                or not isinstance(number, int)
                or not 0 <= number <= RETENTION_MAX[key]
            ):
                raise invalid(
                    "retention.%s must be an integer from 0 to %d"
                    % (key, RETENTION_MAX[key])
                )
            checked[key] = number
    if "mode" in value:
        if value["mode"] not in retention_conf.MODES:
            raise invalid(
                "retention.mode must be one of %s"
                % ", ".join(retention_conf.MODES)
            )
        checked["mode"] = value["mode"]
    return checked


RETENTION_KEYS = ("keep_last", "grace", "mode")
# Bounds that a database integer column and the pass's date arithmetic
# hold (a grace of 10**24 seconds was a 500): a million images per branch,
# 68 years.
RETENTION_MAX = {"keep_last": 1000000, "grace": 2**31 - 1}


def retention(spec, project=None):
    """The app's effective retention, key by key: the app's own value,
    else its project's default (``project``: the keys the project set,
    ``db.retention_defaults``), else the ``[retention]`` option."""
    own = spec.get("retention") or {}
    project = project or {}
    options = CONF.retention
    return {
        key: own.get(key, project.get(key, getattr(options, key)))
        for key in RETENTION_KEYS
    }


def named_images(spec):
    """The values the app's template parameter defaults and environment
    (``parameters``, ``parameter_defaults``) give, sorted: each may name
    an image (by ID or name) that every deploy of the app uses, so image
    retention keeps the image heat_lite built that it names
    (``db.image_holds``, kind ``app``). Values of every parameter are
    taken, not only the image parameter's: one that names no image
    heat_lite built keeps nothing."""
    values = []
    params = spec["template"].get(
        "parameters", spec["template"].get("Parameters")
    )
    if isinstance(params, dict):
        values.extend(
            p.get("default") for p in params.values() if isinstance(p, dict)
        )
    environment = spec.get("environment") or {}
    for key in ("parameters", "parameter_defaults"):
        section = environment.get(key)
        if isinstance(section, dict):
            values.extend(section.values())
    return sorted({v for v in values if isinstance(v, str) and v})


def parse(body):
    """The checked, normalised app.

    :raises InvalidApp: (400) for a malformed body, a URL the operator
        does not allow, an unknown builder or wrong builder options.
    :raises InvalidVerify: (400) for a malformed ``verify``.
    :raises RequestLimitExceeded: (400) for a document over the limit.
    """
    if not isinstance(body, dict):
        raise _invalid("the body must be a map")
    unknown = sorted(str(k) for k in set(body) - set(KEYS))
    if unknown:
        raise _invalid("unknown key %s" % ", ".join(unknown))
    missing = [k for k in REQUIRED if body.get(k) is None]
    if missing:
        raise _invalid("%s is required" % ", ".join(missing))
    source = _source(body["source"])
    template = _document(body["template"], "template", True)
    if not template.get("heat_template_version"):
        raise _invalid("template must be a HOT template")
    image_parameter = body["image_parameter"]
    if not isinstance(image_parameter, str) or not image_parameter:
        raise _invalid("image_parameter must name a parameter")
    if image_parameter not in _declared(template):
        raise _invalid(
            "image_parameter: the template declares no parameter %s"
            % image_parameter
        )
    verify = body.get("verify")
    return {
        "name": _name(body["name"], "name"),
        "source": source,
        "builder": _builder(body["builder"]),
        "template": template,
        "files": _files(body.get("files")),
        "environment": _document(
            body.get("environment"), "environment", False
        ),
        "image_parameter": image_parameter,
        "stacks": _stacks(body.get("stacks"), source["branches"]),
        "verify": verify_spec.parse(verify) if verify is not None else None,
        "retention": _retention(body.get("retention")),
        "webhook_secret": _secret(body.get("webhook_secret")),
    }


def merge(current, patch):
    """The body of an update: ``current`` (a normalised app, without its
    secret) with the keys of ``patch`` laid over it; ``name`` cannot
    change (stacks are named after it). A ``webhook_secret`` of null in
    the patch removes the secret; absent, it keeps it (the caller knows
    which by ``"webhook_secret" in patch``).

    :raises InvalidApp: for a patch that is not a map, is empty or
        renames the app.
    """
    if not isinstance(patch, dict) or not patch:
        raise _invalid("an update must be a non-empty map")
    unknown = sorted(str(k) for k in set(patch) - set(KEYS))
    if unknown:
        raise _invalid("unknown key %s" % ", ".join(unknown))
    if "name" in patch and patch["name"] != current["name"]:
        raise _invalid("an app cannot be renamed: its stacks bear its name")
    body = {k: current.get(k) for k in KEYS if k != "webhook_secret"}
    body.update(patch)
    return body


def follows(branches, branch):
    """Whether ``branch`` matches one of the app's branch patterns."""
    return any(fnmatch.fnmatchcase(branch, p) for p in branches)


def stack_name(app_name, branch, stacks=None):
    """The name of the stack of ``branch``: the adopted one, else
    ``<app>-<branch>`` with every character a stack name cannot hold
    (``/`` first of all) replaced by ``-``, cut to 255 characters."""
    if stacks and branch in stacks:
        return stacks[branch]
    return ("%s-%s" % (app_name, _NOT_IN_NAME.sub("-", branch)))[:MAX_NAME]
