"""The size of a stack tree, known before anything is stored.

``max_resources_per_stack`` counts the whole tree, as Heat counts its
root stack's total: every resource, and the resources of the nested
stacks that template resources, ResourceGroups and ResourceChains make.
``tree_size`` works that out from a bound template, as far as it can be
known at create time (a group's ``count`` from a literal or a parameter,
a template resource's template from ``files``); a template resource that
nests itself, or any tree deeper than ``max_nested_stack_depth``, is
refused here, at create time, rather than once the engine gets there.
Counts that only resources' attributes decide are checked when the
nested stack is made (``check_child``).
"""

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions
from heat_lite.engine import template as template_mod
from heat_lite.engine.template import base, functions, hot
from heat_lite.engine.template import registry as type_registry
from heat_lite.resources import resource_group, template_resource

CONF = conf.CONF


def _too_many():
    return exception.RequestLimitExceeded(
        message="Maximum resources per stack exceeded."
    )


def _too_deep():
    return exception.StackValidationFailed(
        msg="Recursion depth exceeds %d." % CONF.max_nested_stack_depth
    )


class _Walk:
    """One count over a tree; stops as soon as the limit is passed."""

    def __init__(self, files, limit, types=None):
        self.files = files or {}
        self.limit = limit
        self.sizes = {}  # (template file, depth) -> size of its tree
        # When a set: every type name met, as written and as the
        # environment maps it (for the resource_types policy).
        self.types = types

    def resources(self, environment, defns, depth, scope):
        total = 0
        for name, defn in defns.items():
            total += self.resource(environment, name, defn, depth, scope)
            if self.limit != -1 and total > self.limit:
                raise _too_many()
        return total

    def resource(self, environment, name, defn, depth, scope):
        """1 + the resources of the nested stack ``defn`` makes."""
        if self.types is not None:
            self.types.add(defn.type)
            self.types.add(
                type_registry.resolve_type(environment, name, defn.type)
            )
        try:
            cls = definitions.plugin_class(
                environment, name, defn.type, self.files
            )
        except exception.HeatLiteException:
            return 1  # reported by the template's own validation
        if issubclass(cls, template_resource.TemplateResource):
            child_env = type_registry.nested_environment(environment, name)
            return 1 + self.template(
                cls.template_key, cls.template, child_env, depth + 1
            )
        if issubclass(cls, resource_group.ResourceGroup):
            count = _literal(defn, "count", scope, default=1)
            member = _literal(defn, "resource_def", scope, default={})
            return 1 + count * self.member(
                environment, name, member, depth + 1
            )
        if issubclass(cls, resource_group.ResourceChain):
            types = _literal(defn, "resources", scope, default=[])
            return 1 + sum(
                self.member(environment, name, {"type": t}, depth + 1)
                for t in types
            )
        return 1

    def member(self, environment, name, member, depth):
        """Size of one group member, in the group's nested stack."""
        if not isinstance(member, dict) or not isinstance(
            member.get("type"), str
        ):
            return 1
        if depth > CONF.max_nested_stack_depth:
            raise _too_deep()
        defn = _Member(member["type"])
        return self.resource(
            type_registry.nested_environment(environment, name),
            name,
            defn,
            depth,
            None,
        )

    def template(self, key, tmpl, environment, depth):
        if depth > CONF.max_nested_stack_depth:
            raise _too_deep()
        if (key, depth) not in self.sizes:
            parsed = template_mod.parse(tmpl, self.files)
            self.sizes[(key, depth)] = self.resources(
                environment, parsed.resources, depth, None
            )
        return self.sizes[(key, depth)]


class _Member:
    """What ``resource`` needs of a group member's definition."""

    def __init__(self, type_name):
        self.type = type_name
        self.properties = {}


def _literal(defn, key, scope, default):
    """The property ``key`` of ``defn`` if it can be known now (a literal,
    or functions of parameters when ``scope`` is given), else
    ``default``."""
    props = defn.properties if isinstance(defn.properties, dict) else {}
    value = props.get(key, default)
    if scope is not None:
        try:
            value = functions.resolve(value, scope)
        except exception.HeatLiteException:
            return default
    if base.contains_function(value):
        return default
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            return default
        try:
            return max(int(value), 0)
        except ValueError:
            return default
    return value if type(value) is type(default) else default


def tree_size(bound, depth=0, types=None):
    """Resources the tree of ``bound`` (a stack at nesting ``depth``)
    will hold, as far as can be known now.

    :param types: a set to add every resource type name of the tree to.

    :raises RequestLimitExceeded: past ``max_resources_per_stack``.
    :raises StackValidationFailed: past ``max_nested_stack_depth``.
    """
    walk = _Walk(bound.files, CONF.max_resources_per_stack, types)
    return walk.resources(
        bound.environment, bound.resources, depth, hot.ParamScope(bound)
    )


def check_child(parent, bound):
    """Check a nested stack about to be made under ``parent`` (a stack
    row): the root's whole tree, with the child's, within the limit."""
    limit = CONF.max_resources_per_stack
    if limit == -1:
        return
    root = parent
    while root.get("owner_id"):
        root = db_stacks.stack_get(root["owner_id"])
    stacks = [root["id"]] + [
        row["id"] for _level, row in db_stacks.stack_descendants([root["id"]])
    ]
    existing = sum(
        len(records)
        for records in db_records.resources_of_stacks(stacks).values()
    )
    if existing + tree_size(bound, parent["nested_depth"] + 1) > limit:
        raise _too_many()
