"""Checks on what a user submits, before anything is stored."""

import json
import re

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.engine import definitions, limits
from heat_lite.engine.template import base as tmpl_base
from heat_lite.engine.template import environment as env_mod
from heat_lite.engine.template import functions, hot
from heat_lite.engine.template import merge as env_merge
from heat_lite.engine.template import registry as type_registry

CONF = conf.CONF
_NAME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")
_PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")
# Functions whose value comes from a nested stack's parent resource.
_NEEDS_PARENT = ("resource_facade", "Fn::ResourceFacade")


# Resolves with no resource state (references give names, attributes
# None), so literal property values can be checked up front.
ValidationScope = hot.ParamScope


def check_stack_name(name):
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise exception.Invalid(
            message="Invalid stack name %s must contain "
            'only alphanumeric or "_-." characters, '
            "must start with alpha and must be 255 "
            "characters or less." % name
        )


def check_template_size(template):
    size = (
        len(json.dumps(template))
        if not isinstance(template, str)
        else len(template)
    )
    if size > CONF.max_template_size:
        raise exception.RequestLimitExceeded(
            message="Template size (%d bytes) exceeds maximum allowed size "
            "(%d bytes)." % (size, CONF.max_template_size)
        )


def environment(env, params, environment_files=None, files=None):
    """The environment of a request.

    Request ``params`` are laid on the ``environment``; when
    ``environment_files`` are given the server ignores ``environment``
    and merges those files (from ``files``), in order, on top of the
    parameters, as Heat does.
    """
    if params is not None and not isinstance(params, dict):
        raise exception.Invalid(message="parameters must be a map")
    if environment_files:
        return env_merge.merge_files(
            {"parameters": params or {}}, environment_files, files or {}
        )
    env = env_mod.parse(env)
    env["parameters"].update(params or {})
    return env


def bind(template, env, files, stack_info, depth=0, authorize=None):
    """Parse, bind and check a template the way create and update need.

    :param depth: the stack's nesting depth (0 for a top-level stack).
    :param authorize: ``authorize(type names)`` raises if the caller may
        not use one of them: called with the template's own types before
        its properties are checked (Heat's order: 403 before 400), then
        with those of the nested templates the tree will make.
    :raises: typed 400 errors naming the template path; RequestLimitExceeded
        when the stack's tree would pass ``max_resources_per_stack``.
    """
    if not isinstance(template, dict):
        raise exception.InvalidTemplateVersion(
            explanation="Template format version not found."
        )
    check_template_size(template)
    bound = definitions.bind(template, env, files or {}, stack_info)
    types = None
    if authorize is not None:
        types = set()
        for name, defn in bound.resources.items():
            types.add(defn.type)
            types.add(
                type_registry.resolve_type(bound.environment, name, defn.type)
            )
        authorize(types)
    classes = {}
    for name, defn in bound.resources.items():
        try:
            classes[name] = definitions.plugin_class(
                bound.environment, name, defn.type, bound.files
            )
        except exception.ResourceTypeUnavailable:
            raise exception.StackValidationFailed(
                path="resources.%s" % name,
                msg="The Resource Type (%s) could not be found." % defn.type,
            ) from None
    tree_types = set() if authorize is not None else None
    limits.tree_size(bound, depth, tree_types)
    if tree_types:
        authorize(tree_types - types)
    _check_duplicate_names(bound)
    # A resource taken over by ``external_id`` is someone else's: its
    # properties are not checked as if it were to be created (as Heat).
    created = {
        name: defn
        for name, defn in bound.resources.items()
        if defn.external_id is None
    }
    for name, defn in created.items():
        _check_static_properties(bound, defn, classes[name])
    if authorize is not None:
        for name, defn in created.items():
            _check_request(bound, defn, classes[name])
    return bound


def _check_duplicate_names(bound):
    """A parameter (pseudo parameters included) and a resource may not
    share a name; Heat's message prints the names as a Python set."""
    names = set(bound.template.parameters) | set(_PSEUDO_PARAMETERS)
    duplicates = sorted(names & set(bound.resources))
    if duplicates:
        raise exception.StackValidationFailed(
            message="Duplicate names {%s}"
            % ", ".join(repr(n) for n in duplicates)
        )


def _check_static_properties(bound, defn, cls):
    """Validate the properties whose values need no resource.

    Literal values and what parameters and files give (``get_param``,
    ``str_replace`` of parameters...) are checked now, custom constraints
    included, as Heat does at create: a flavor that does not exist is a
    400 whether it is written in the template or passed as a parameter.
    Values that need a resource (``get_attr``, ``get_resource``) or the
    parent of a nested stack (``resource_facade``) are checked when the
    resource is created, once they can be resolved.
    """
    path = "resources.%s.properties" % defn.name
    props = defn.properties
    if not isinstance(props, dict):
        return
    unknown = set(bound.stack_info.get("unknown_parameters", ()))
    static = {
        k: v
        for k, v in props.items()
        if _static(v) and not _uses_parameter(v, unknown)
    }
    unresolved = [k for k in props if k not in static]
    values = functions.resolve(static, ValidationScope(bound))
    cls.validate_properties(values, path, unresolved)


def _uses_parameter(value, names):
    """True if ``value`` reads one of the parameters ``names`` (those a
    validate has no value for: what they feed is not checked, as Heat's
    non-strict validate checks no property values; Horizon validates a
    template before the user has typed any)."""
    if not names:
        return False
    if isinstance(value, tmpl_base.Function):
        if value.name in ("get_param", "Ref"):
            args = value.args
            name = args[0] if isinstance(args, list) and args else args
            if isinstance(name, str) and name in names:
                return True
        return _uses_parameter(value.args, names)
    if isinstance(value, dict):
        return any(_uses_parameter(v, names) for v in value.values())
    if isinstance(value, list):
        return any(_uses_parameter(v, names) for v in value)
    return False


def _static(value):
    """True if ``value`` resolves from parameters and files alone."""
    if isinstance(value, tmpl_base.Function):
        return (
            value.name not in _NEEDS_PARENT
            and not tmpl_base.references(value)
            and _static(value.args)
        )
    if isinstance(value, dict):
        return all(_static(v) for v in value.values())
    if isinstance(value, list):
        return all(_static(v) for v in value)
    return True


def _check_request(bound, defn, cls):
    """A caller's create or update (``authorize`` given): the plugin's
    ``check_request`` with the properties that depend on no resource."""
    check = getattr(cls, "check_request", None)
    props = defn.properties
    if check is None or not isinstance(props, dict):
        return
    static = {k: v for k, v in props.items() if not tmpl_base.references(v)}
    values = functions.resolve(static, ValidationScope(bound))
    check(values, bound.files or {}, "resources.%s" % defn.name)


def has_function(value):
    if isinstance(value, functions.Function):
        return True
    if isinstance(value, dict):
        return any(has_function(v) for v in value.values())
    if isinstance(value, list):
        return any(has_function(v) for v in value)
    return False
