"""Resource and output definitions: one entry of ``resources``/``outputs``.

A definition validates the keys and types of its snippet, parses the
function-bearing parts (properties, metadata, policies, condition) and
lists the resources it depends on. ``bound()`` returns the copy the
engine uses once parameter values are known: deletion policy, external
id and update policy resolved, the condition decided.
"""

import collections.abc
import copy

from heat_lite.common import exception
from heat_lite.engine.template import base, conditions, fn_conditions, versions

RESOURCE_KEYS = (
    "type",
    "properties",
    "metadata",
    "depends_on",
    "update_policy",
    "deletion_policy",
    "description",
)
CONDITION_KEYS = ("condition", "external_id")
OUTPUT_KEYS = ("value", "description")
DELETION_POLICIES = {
    "Delete": "Delete",
    "Retain": "Retain",
    "Snapshot": "Snapshot",
}
LOWER_POLICIES = {
    "delete": "Delete",
    "retain": "Retain",
    "snapshot": "Snapshot",
}
_OBJECT = (collections.abc.Mapping, base.Function)


def _fail(path, msg):
    raise exception.StackValidationFailed(path=path, msg=msg)


def _check_type(name, snippet, key, types, typename, path):
    value = snippet.get(key)
    if value is not None and not isinstance(value, types):
        _fail(
            path + "." + key,
            "Resource %s %s type must be %s" % (name, key, typename),
        )
    return value


def _section(parsed):
    """A parsed map-valued section; a removed or empty one is {}."""
    return {} if parsed is base.REMOVED or parsed is None else parsed


class ResourceDefinition:
    """One entry of ``resources``, with functions parsed."""

    def __init__(self, name, snippet, ctx):
        path = "resources.%s" % (name,)
        self.name, self.path, self.snippet = name, path, snippet
        self.version = ctx.version
        if not snippet:
            _fail(path, "Each resource must contain a type key.")
        if not isinstance(snippet, collections.abc.Mapping):
            _fail(
                path,
                '"resources" must contain a map of resource maps. '
                "Found a [%s] instead" % type(snippet).__name__,
            )
        allowed = RESOURCE_KEYS
        if ctx.version >= versions.CONDITIONS:
            allowed += CONDITION_KEYS
        for key in snippet:
            if key not in allowed:
                _fail(
                    path,
                    '"%s" is not a valid keyword inside a resource '
                    "definition" % (key,),
                )
        self.type = _check_type(name, snippet, "type", str, "string", path)
        if not self.type:
            _fail(path, "Each resource must contain a type key.")
        self._parse_sections(ctx, snippet, path)
        self._parse_depends(snippet, path)
        self._references = (
            [(dep, path + ".depends_on") for dep in self.explicit_depends]
            + base.references(self.properties)
            + base.references(self.metadata)
        )
        self.depends = {name for name, _path in self._references}

    def _parse_sections(self, ctx, snippet, path):
        name = self.name
        for key in ("properties", "metadata", "update_policy"):
            _check_type(name, snippet, key, _OBJECT, "object", path)
        self.description = _check_type(
            name, snippet, "description", (str, int, float), "string", path
        )
        self.description = str(self.description or "")
        self.properties = _section(
            ctx.parse(snippet.get("properties"), path + ".properties")
        )
        self.metadata = _section(
            ctx.parse(snippet.get("metadata"), path + ".metadata")
        )
        self.update_policy = _section(
            ctx.parse(snippet.get("update_policy"), path + ".update_policy")
        )
        policy = _check_type(
            name,
            snippet,
            "deletion_policy",
            (str, base.Function, dict),
            "string",
            path,
        )
        self.deletion_policy = self._policy(
            ctx.parse(policy, path + ".deletion_policy")
            if policy is not None
            else "Delete",
            ctx.version,
        )
        external = _check_type(
            name,
            snippet,
            "external_id",
            (str, base.Function, dict),
            "string",
            path,
        )
        self.external_id = ctx.parse(external, path + ".external_id")
        if self.external_id is base.REMOVED:
            self.external_id = None
        cond = _check_type(
            name,
            snippet,
            "condition",
            (str, bool, base.Function, dict),
            "string_or_boolean",
            path,
        )
        self.condition = None
        if cond is not None:
            self.condition = ctx.condition_context().parse(
                cond, path + ".condition"
            )
            fn_conditions.check_condition_arg(
                self.condition, ctx, path + ".condition"
            )

    def _policy(self, policy, version):
        """Canonical deletion policy, or the parsed function for later."""
        if isinstance(policy, base.Function):
            return policy
        if policy is base.REMOVED or policy is None:
            return "Delete"
        policies = dict(DELETION_POLICIES)
        if version >= versions.LOWER_DELETION_POLICY:
            policies.update(LOWER_POLICIES)
        if not isinstance(policy, str) or policy not in policies:
            _fail(
                self.path + ".deletion_policy",
                'Invalid deletion policy "%s"' % (policy,),
            )
        return policies[policy]

    def _parse_depends(self, snippet, path):
        depends = snippet.get("depends_on")
        if depends is None:
            depends = []
        elif isinstance(depends, str):
            depends = [depends]
        if not isinstance(depends, list):
            _fail(
                path + ".depends_on",
                "Resource %s depends_on type must "
                "be list or string" % self.name,
            )
        for dep in depends:
            if not isinstance(dep, str):
                _fail(
                    path + ".depends_on",
                    "depends_on must name resources "
                    "(strings), not %s" % base.short(dep),
                )
        if depends and self.external_id is not None:
            _fail(
                path + ".depends_on",
                "A resource with external_id cannot have depends_on",
            )
        self.explicit_depends = list(dict.fromkeys(depends))

    def references(self):
        """[(resource name, path)] of every resource this one refers to."""
        return self._references

    def resolve_properties(self, scope):
        """The properties with every function resolved."""
        return self._resolve_map(self.properties, scope, "properties")

    def resolve_metadata(self, scope):
        """The metadata with every function resolved."""
        return self._resolve_map(self.metadata, scope, "metadata")

    def _resolve_map(self, parsed, scope, key):
        value = base.resolve(parsed, scope)
        if value is None:
            return {}
        if not isinstance(value, collections.abc.Mapping):
            _fail(
                "%s.%s" % (self.path, key),
                "Resource %s %s type must be object" % (self.name, key),
            )
        return value

    def enabled(self, scope):
        """Whether the condition (if any) holds."""
        return conditions.decide(
            self.condition, scope, self.path + ".condition"
        )

    def bound(self, scope):
        """A copy with policies and external id resolved for ``scope``."""
        defn = copy.copy(self)
        if isinstance(self.deletion_policy, base.Function):
            defn.deletion_policy = self._policy(
                base.resolve(self.deletion_policy, scope), self.version
            )
        if self.external_id is not None:
            defn.external_id = base.resolve(self.external_id, scope)
            if not isinstance(defn.external_id, str):
                _fail(
                    self.path + ".external_id",
                    "Resource %s external_id type must be string" % self.name,
                )
        defn.update_policy = self._resolve_map(
            self.update_policy, scope, "update_policy"
        )
        defn.condition = None
        return defn

    def without_depends(self, names):
        """A copy whose ``depends_on`` leaves out ``names``.

        Heat ignores an explicit dependency on a resource that a false
        condition removed from the stack (a reference by function to such
        a resource is still an error).
        """
        defn = copy.copy(self)
        defn.explicit_depends = [
            d for d in self.explicit_depends if d not in names
        ]
        explicit = self.path + ".depends_on"
        defn._references = [
            (name, path)
            for name, path in self._references
            if name not in names or path != explicit
        ]
        defn.depends = {name for name, _path in defn._references}
        return defn


class OutputDefinition:
    """One entry of ``outputs``: ``value``, ``description``, ``condition``."""

    enabled = True

    def __init__(self, name, snippet, ctx):
        path = "outputs.%s" % (name,)
        self.name, self.path, self.snippet = name, path, snippet
        if not snippet:
            _fail(path, "Each output must contain a value key.")
        if not isinstance(snippet, collections.abc.Mapping):
            _fail(
                path,
                '"outputs" must contain a map of output maps. Found '
                "a [%s] instead" % type(snippet).__name__,
            )
        allowed = OUTPUT_KEYS
        if ctx.version >= versions.CONDITIONS:
            allowed += ("condition",)
        for key in snippet:
            if key not in allowed:
                _fail(
                    path,
                    '"%s" is not a valid keyword inside a output '
                    "definition" % (key,),
                )
        if "value" not in snippet:
            _fail(path, "Each output must contain a value key.")
        description = snippet.get("description", "No description given")
        self.description = str(description)
        self.value = ctx.outputs_context().parse(
            snippet["value"], path + ".value"
        )
        if self.value is base.REMOVED:
            self.value = None
        self.condition = None
        if snippet.get("condition") is not None:
            self.condition = ctx.condition_context().parse(
                snippet["condition"], path + ".condition"
            )
            fn_conditions.check_condition_arg(
                self.condition, ctx, path + ".condition"
            )

    def bound(self, scope):
        """A copy whose value is None when the condition is false."""
        defn = copy.copy(self)
        defn.enabled = conditions.decide(
            self.condition, scope, self.path + ".condition"
        )
        if not defn.enabled:
            defn.value = None
        defn.condition = None
        return defn

    def resolve_value(self, scope):
        return base.resolve(self.value, scope)
