"""A parsed HOT template (``Template``) and a bound one (``BoundTemplate``).

``Template`` is built once per stored template and is immutable, so the
engine caches it by template id. Parsing checks everything that can be
checked without parameter values: sections and keys, function usage per
version, parameter declarations and defaults, condition names, references
to resources and the absence of cycles.

``BoundTemplate`` adds the environment and the stack: parameter values,
conditions evaluated, resources whose condition is false left out, ``if``
functions decided (so dependencies follow the chosen branch only).
"""

import collections

from heat_lite.common import exception
from heat_lite.engine import graph
from heat_lite.engine.template import (
    base,
    conditions,
    functions,
    parameters,
    rsrc_defn,
    versions,
)
from heat_lite.engine.template import environment as env_mod

SECTIONS = (
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
)
CFN_VERSION_KEYS = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion")


def _version(tmpl):
    if not isinstance(tmpl, dict):
        raise exception.StackValidationFailed(
            msg="The template is not a JSON object or YAML mapping."
        )
    if "heat_template_version" in tmpl:
        return versions.normalise(tmpl["heat_template_version"])
    for key in CFN_VERSION_KEYS:
        if key in tmpl:
            raise exception.InvalidTemplateVersion(
                explanation='"%s: %s". CloudFormation templates are not '
                'supported, use "heat_template_version"' % (key, tmpl[key])
            )
    raise exception.InvalidTemplateVersion(
        explanation="Template format version not found."
    )


def _named_section(tmpl, section):
    value = tmpl.get(section)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise exception.StackValidationFailed(
            path=section, msg="The %s section must be a map" % section
        )
    for name in value:
        if not isinstance(name, str) or not name:
            raise exception.StackValidationFailed(
                path="%s.%s" % (section, name),
                msg="The names in %s must be non-empty strings" % section,
            )
    return value


def build_graph(resources, outputs=()):
    """Graph of resource names (a requires b) of resource definitions.

    :raises InvalidTemplateReference: for a reference to an unknown
        resource (from a resource or an output).
    :raises CircularDependencyException: naming the cycle.
    """
    g = graph.Graph()
    for name, defn in resources.items():
        g.add_node(name)
        for dep, path in defn.references():
            if dep not in resources:
                raise exception.InvalidTemplateReference(
                    resource=dep, key=path
                )
            g.add_edge(name, dep)
    for output in outputs:
        for dep, path in base.references(output.value):
            if dep not in resources:
                raise exception.InvalidTemplateReference(
                    resource=dep, key=path
                )
    g.topological_order()
    return g


class Template:
    """A validated HOT template (static: no parameter values yet)."""

    def __init__(self, tmpl, files=None):
        self.version = _version(tmpl)
        base.check_depth(tmpl)
        allowed = SECTIONS
        if self.version >= versions.CONDITIONS:
            allowed += ("conditions",)
        for section in tmpl:
            if section not in allowed:
                raise exception.InvalidTemplateSection(section=section)
        self.raw = tmpl
        if files is not None and not isinstance(files, dict):
            raise exception.StackValidationFailed(
                path="files", msg="The files map must be a map"
            )
        self.files = dict(files or {})
        self._check_files = files is not None
        self.description = self._description(tmpl.get("description"))
        self.parameters = parameters.parse_schema(
            tmpl.get("parameters"), self.version
        )
        self.parameter_groups = tmpl.get("parameter_groups") or []
        parameters.validate_groups(
            tmpl.get("parameter_groups"), self.parameters
        )
        condition_section = _named_section(tmpl, "conditions")
        ctx = self.context(set(condition_section))
        self.conditions = conditions.Conditions(condition_section, ctx)
        self.resources, self.outputs = self._definitions(ctx)
        self.needs_rebinding = self._uses_if()
        self.dependency_graph()

    @staticmethod
    def _description(value):
        if value is None:
            return "No description"
        if isinstance(value, (dict, list)):
            raise exception.StackValidationFailed(
                path="description", msg="The description must be a string"
            )
        return str(value)

    def context(self, condition_names=None, **kwargs):
        """A ParseContext for snippets of this template."""
        if condition_names is None:
            condition_names = self.conditions.names()
        return functions.ParseContext(
            self.version,
            param_names=set(self.parameters),
            files=self.files if self._check_files else None,
            condition_names=condition_names,
            **kwargs,
        )

    def _definitions(self, ctx):
        resources = collections.OrderedDict(
            (name, rsrc_defn.ResourceDefinition(name, snippet, ctx))
            for name, snippet in _named_section(self.raw, "resources").items()
        )
        outputs = collections.OrderedDict(
            (name, rsrc_defn.OutputDefinition(name, snippet, ctx))
            for name, snippet in _named_section(self.raw, "outputs").items()
        )
        return resources, outputs

    def _uses_if(self):
        parts = [self.outputs[n].value for n in self.outputs]
        for defn in self.resources.values():
            parts += [
                defn.properties,
                defn.metadata,
                defn.update_policy,
                defn.deletion_policy,
                defn.external_id,
            ]
        return base.contains_function(parts, {"if"})

    def dependency_graph(self):
        """Return the Graph of resource names (a requires b).

        Every resource is in it, whatever its condition, and references
        inside both branches of ``if`` count.

        :raises InvalidTemplateReference: for a reference to an unknown
            resource.
        :raises CircularDependencyException: naming the cycle.
        """
        return build_graph(self.resources, self.outputs.values())

    def immutable_changes(self, old_values, new_values):
        """Names of immutable parameters whose value would change."""
        return parameters.immutable_changes(
            self.parameters, old_values, new_values
        )

    def check_immutable(self, old_values, new_values):
        """:raises ImmutableParameterModified: naming the parameters."""
        changed = self.immutable_changes(old_values, new_values)
        if changed:
            raise exception.ImmutableParameterModified(keys=", ".join(changed))

    def bind(self, environment, stack_info):
        """Return the template bound to parameter values and a stack.

        :param environment: an environment (``environment.parse`` output,
            or anything it accepts).
        :param stack_info: {"name", "id", "project_id"} of the stack.
        :raises UnknownUserParameter, UserParameterMissing,
            StackValidationFailed: for bad parameter values or conditions.
        """
        return BoundTemplate(self, environment, stack_info)


class ParamScope(base.Scope):
    """Parameters and files only: what conditions and policies may use."""

    def __init__(self, bound):
        self.bound = bound

    def param(self, name):
        return self.bound.param(name)

    def file(self, key):
        return self.bound.file(key)


class BoundTemplate:
    """A template with parameter values: what the engine converges to."""

    def __init__(self, template, environment, stack_info):
        self.template = template
        self.version = template.version
        self.environment = env_mod.parse(environment)
        self.stack_info = dict(stack_info or {})
        self.description = template.description
        self.files = template.files
        self.parameters = parameters.resolve_values(
            template.parameters,
            self.environment["parameters"],
            self.environment["parameter_defaults"],
        )
        params = ParamScope(self)
        self.conditions = template.conditions.evaluate(params)
        scope = conditions.ConditionScope(
            template.conditions, params, self.conditions
        )
        resources, outputs = template.resources, template.outputs
        if template.needs_rebinding:
            ctx = template.context(
                conditions=self.conditions, condition_scope=scope
            )
            resources, outputs = template._definitions(ctx)
        self.resources = collections.OrderedDict(
            (name, defn.bound(scope))
            for name, defn in resources.items()
            if defn.enabled(scope)
        )
        absent = set(resources) - set(self.resources)
        if absent:
            for name, defn in self.resources.items():
                if absent & set(defn.explicit_depends):
                    self.resources[name] = defn.without_depends(absent)
        self.outputs = collections.OrderedDict(
            (name, defn.bound(scope)) for name, defn in outputs.items()
        )
        self._graph = build_graph(
            self.resources, [o for o in self.outputs.values() if o.enabled]
        )

    def param(self, name):
        """The value of parameter ``name`` (pseudo parameters included).

        :raises UserParameterMissing: for an unknown name.
        """
        pseudo = {
            "OS::stack_name": self.stack_info.get("name"),
            "OS::stack_id": self.stack_info.get("id"),
            "OS::project_id": self.stack_info.get("project_id"),
        }
        if name in pseudo:
            return pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        raise exception.UserParameterMissing(key=name)

    def condition(self, name):
        """The value of condition ``name``.

        :raises StackValidationFailed: for an unknown name.
        """
        if name not in self.conditions:
            raise exception.StackValidationFailed(
                msg='Invalid condition "%s"' % (name,)
            )
        return self.conditions[name]

    def file(self, key):
        """Content of ``files[key]``.

        :raises StackValidationFailed: if the files map has no such key.
        """
        if key not in self.files:
            raise exception.StackValidationFailed(
                msg='No content found in the "files" section for get_file '
                "path: %s" % key
            )
        return self.files[key]

    def parameters_display(self):
        """{name: string} as stack show prints them (hidden masked)."""
        shown = {
            "OS::stack_name": self.stack_info.get("name") or "",
            "OS::stack_id": self.stack_info.get("id") or "None",
            "OS::project_id": self.stack_info.get("project_id") or "",
        }
        for name, param in self.template.parameters.items():
            shown[name] = param.display(self.parameters.get(name))
        return shown

    def environment_display(self):
        """The environment as shown to users: hidden values masked."""
        hidden = {n for n, p in self.template.parameters.items() if p.hidden}
        return env_mod.masked(self.environment, hidden)

    def dependency_graph(self):
        """A new Graph of the names of the resources present (a requires b)."""
        g = graph.Graph()
        for name in self.resources:
            g.add_node(name)
            for dep in self._graph.requires(name):
                g.add_edge(name, dep)
        return g
