"""Resolve resource types through an environment's ``resource_registry``.

Pure functions over a parsed environment, for the engine to call:

* ``resolve_type``: follow aliases (``"OS::A": "OS::B"``), globs
  (``"OS::Nova::*": "OS::Heat::None"``, ``"OS::Net*": "OS::Neutron*"``)
  and per-resource overrides (``resources: {web: {"OS::A": ...}}``) to
  the final type name or template file name;
* ``hooks`` and ``restricted_actions`` of one resource, from the
  ``resources`` entries whose name or glob (``"*_server"``) matches;
* ``nested_environment``: the environment a template resource's nested
  stack gets (``parameter_defaults`` propagate, ``parameters`` do not,
  per-resource entries nested under the resource's name apply inside).
"""

import fnmatch

from heat_lite.common import exception
from heat_lite.engine.template import environment as env_mod

TEMPLATE_SUFFIXES = (".yaml", ".template")
MAX_ALIASES = 50


def is_template(type_name):
    """Whether a type name is a template file (a template resource)."""
    return isinstance(type_name, str) and type_name.endswith(TEMPLATE_SUFFIXES)


def _registry(environment):
    if not (
        isinstance(environment, dict)
        and isinstance(environment.get("resource_registry"), dict)
    ):
        environment = env_mod.parse(environment)
    return environment["resource_registry"]


def _matching_entries(registry, resource_name):
    """Per-resource entries for ``resource_name``: exact name, then globs."""
    entries = registry.get("resources") or {}
    if not resource_name:
        return []
    found = []
    if isinstance(entries.get(resource_name), dict):
        found.append(entries[resource_name])
    for pattern in sorted(k for k in entries if isinstance(k, str)):
        if (
            pattern != resource_name
            and isinstance(entries[pattern], dict)
            and fnmatch.fnmatchcase(resource_name, pattern)
        ):
            found.append(entries[pattern])
    return found


def _lookup(mapping, type_name):
    """(found, target) for ``type_name`` in one mapping of types."""
    value = mapping.get(type_name)
    if type_name in mapping and not isinstance(value, dict):
        return True, value
    globs = [
        k
        for k in mapping
        if isinstance(k, str)
        and k.endswith("*")
        and type_name.startswith(k[:-1])
        and not isinstance(mapping[k], dict)
    ]
    if not globs:
        return False, None
    pattern = max(globs, key=len)
    target = mapping[pattern]
    if isinstance(target, str) and target.endswith("*"):
        target = target[:-1] + type_name[len(pattern) - 1 :]
    return True, target


def resolve_type(environment, resource_name, type_name):
    """The type (or template file) ``type_name`` maps to for a resource.

    :param environment: a parsed environment (or anything
        ``environment.parse`` accepts).
    :param resource_name: the resource's name, for per-resource entries
        (None to use the global registry only).
    :raises StackValidationFailed: for aliases that loop.
    """
    registry = _registry(environment)
    mappings = _matching_entries(registry, resource_name) + [registry]
    chain = [type_name]
    current = type_name
    while len(chain) <= MAX_ALIASES:
        target = None
        for mapping in mappings:
            found, target = _lookup(mapping, current)
            if found:
                break
        if not isinstance(target, str) or target == current:
            return current
        if target in chain:
            break
        chain.append(target)
        current = target
        if is_template(current):
            return current
    raise exception.StackValidationFailed(
        path="resource_registry",
        msg="Circular resource type mapping: %s"
        % " -> ".join(chain + [target]),
    )


def _names(environment, resource_name, key):
    registry = _registry(environment)
    result = set()
    for entry in _matching_entries(registry, resource_name):
        result.update(env_mod.as_list(entry.get(key)))
    return result


def hooks(environment, resource_name):
    """The hooks (``pre-create``...) set on resource ``resource_name``."""
    return _names(environment, resource_name, "hooks")


def restricted_actions(environment, resource_name):
    """The restricted actions (``update``, ``replace``) of a resource."""
    return _names(environment, resource_name, "restricted_actions")


def nested_environment(environment, resource_name):
    """The environment of the nested stack of template resource
    ``resource_name``."""
    env = env_mod.parse(environment)
    registry = env["resource_registry"]
    nested = {}
    for entry in _matching_entries(registry, resource_name):
        for key, value in entry.items():
            if isinstance(value, dict):
                nested.setdefault(key, {}).update(value)
    env["resource_registry"] = {
        k: v for k, v in registry.items() if k != "resources"
    }
    if nested:
        env["resource_registry"]["resources"] = nested
    env["parameters"] = {}
    return env
