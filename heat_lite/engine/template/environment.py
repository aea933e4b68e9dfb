"""The stack environment: user parameters, defaults and the registry.

``parse`` turns what a user sends (a mapping, YAML/JSON text or nothing)
into a dict with every section present and checks its structure the way
Heat does (unknown or empty sections, hook and restricted-action names).
Parsing is idempotent: ``parse(parse(env)) == parse(env)``, so the engine
may store the parsed form and parse it again when it loads it.
``merge_files`` merges ``environment_files`` on the server as Heat does;
``masked`` hides the values of hidden parameters for display.
"""

import copy

from heat_lite.common import exception, template_format
from heat_lite.engine.template import base

SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "encrypted_param_names",
    "parameter_merge_strategies",
)
_MAPS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "parameter_merge_strategies",
)
HOOK_TYPES = (
    "pre-create",
    "pre-update",
    "pre-delete",
    "post-create",
    "post-update",
    "post-delete",
)
RESTRICTED_ACTIONS = ("update", "replace")
# Keys of a per-resource entry that are not type mappings.
RESOURCE_KEYS = ("hooks", "restricted_actions", "base_url")


def _fail(msg, path="environment"):
    raise exception.StackValidationFailed(path=path, msg=msg)


def _load(env):
    if env is None or env == "":
        return {}
    if isinstance(env, (bytes, str)):
        try:
            env = template_format.loads(env)
        except ValueError as exc:
            _fail("Error parsing environment: %s" % exc)
        if env is None:
            return {}
    if not isinstance(env, dict):
        _fail("The environment is not a valid YAML mapping data type.")
    return env


def parse(env):
    """Return a normalised environment dict with every section present.

    :param env: a mapping, a YAML/JSON string, or None.
    :raises StackValidationFailed: for unknown or empty sections or bad
        types.
    :raises InvalidBreakPointHook, InvalidRestrictedAction: for unknown
        hook or restricted action names in the registry.
    """
    env = _load(env)
    base.check_depth(env, "environment")
    for section, value in env.items():
        if section not in SECTIONS:
            _fail('environment has wrong section "%s"' % (section,))
        if value is None:
            _fail('environment has empty section "%s"' % section)
        if section in _MAPS and not isinstance(value, dict):
            _fail('The "%s" section must be a map' % section, section)
        if section not in _MAPS and not isinstance(value, list):
            _fail('The "%s" section must be a list' % section, section)
    _check_registry(env.get("resource_registry", {}), "resource_registry")
    _check_strategies(env.get("parameter_merge_strategies", {}))
    result = copy.deepcopy(env)
    for section in SECTIONS:
        result.setdefault(section, {} if section in _MAPS else [])
    return result


def _check_registry(registry, path):
    for key, value in registry.items():
        if not isinstance(key, str):
            _fail("Registry keys must be strings", path)
        if key == "resources":
            if not isinstance(value, dict):
                _fail(
                    "The resources of the registry must be a map",
                    path + ".resources",
                )
            for name, entry in value.items():
                _check_resource_entry(entry, "%s.resources.%s" % (path, name))
        elif value is not None and not isinstance(value, str):
            _fail(
                'The registry entry "%s" must be a type or template name'
                % key,
                path,
            )


def _check_resource_entry(entry, path):
    if not isinstance(entry, dict):
        _fail("A per-resource registry entry must be a map", path)
    for key, value in entry.items():
        if key == "hooks":
            _check_names(
                value,
                HOOK_TYPES,
                exception.InvalidBreakPointHook,
                'Invalid hook type "%s" for resource breakpoint, '
                "acceptable hook types are: %s",
            )
        elif key == "restricted_actions":
            _check_names(
                value,
                RESTRICTED_ACTIONS,
                exception.InvalidRestrictedAction,
                'Invalid restricted_action type "%s" for resource, '
                "acceptable restricted_action types are: %s",
            )
        elif isinstance(value, dict):
            _check_resource_entry(value, "%s.%s" % (path, key))
        elif value is not None and not isinstance(value, str):
            _fail(
                'The registry entry "%s" must be a type or template name'
                % (key,),
                path,
            )


def _check_names(value, allowed, error, fmt):
    for name in as_list(value):
        if name not in allowed:
            raise error(message=fmt % (name, ", ".join(allowed)))


def as_list(value):
    """A hooks/restricted_actions value (one name or a list) as a list."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [v if isinstance(v, str) else str(v) for v in items]


def _check_strategies(strategies):
    for key, value in strategies.items():
        if not isinstance(key, str) or not isinstance(value, str):
            _fail(
                "parameter_merge_strategies must map parameter names to "
                "strategy names",
                "parameter_merge_strategies",
            )


def masked(env, hidden_names):
    """A copy of a parsed ``env`` with hidden parameter values masked."""
    result = copy.deepcopy(env)
    for section in ("parameters", "parameter_defaults"):
        values = result.get(section) or {}
        for name in values:
            if name in hidden_names:
                values[name] = "******"
    return result


def merge_files(base_env, environment_files, files, param_schemata=None):
    """Merge ``environment_files`` (names in ``files``) on top of ``base_env``.

    Heat's server-side merge: files in order, each with its own
    ``parameter_merge_strategies``. See ``merge.merge_files``.
    """
    from heat_lite.engine.template import merge

    return merge.merge_files(
        base_env, environment_files, files, param_schemata
    )
