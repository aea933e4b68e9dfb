"""A parsed HOT template: sections, resource definitions and outputs.

``Template`` is built once per stored template and is immutable, so the
engine caches it by template id. It knows nothing of the database.
"""

import collections

from heat_lite.common import exception
from heat_lite.engine import graph
from heat_lite.engine.template import functions, parameters, versions

SECTIONS = {"heat_template_version", "description", "parameter_groups",
            "parameters", "resources", "outputs", "conditions"}
RESOURCE_KEYS = {"type", "properties", "metadata", "depends_on",
                 "update_policy", "deletion_policy", "description",
                 "condition", "external_id"}
OUTPUT_KEYS = {"value", "description", "condition"}


class ResourceDefinition:
    """One entry of ``resources``, with functions parsed."""

    def __init__(self, name, snippet, allowed):
        path = "resources.%s" % name
        if not isinstance(snippet, dict):
            raise exception.StackValidationFailed(
                path=path, msg="Resource definition must be a mapping")
        unknown = set(snippet) - RESOURCE_KEYS
        if unknown:
            raise exception.StackValidationFailed(
                path=path, msg='"%s" is not a valid keyword inside a '
                'resource definition' % sorted(unknown)[0])
        rtype = snippet.get("type")
        if not isinstance(rtype, str) or not rtype:
            raise exception.StackValidationFailed(
                path=path, msg='"type" must be a non-empty string')
        self.name = name
        self.type = rtype
        self.snippet = snippet
        props = snippet.get("properties") or {}
        if not isinstance(props, dict):
            raise exception.StackValidationFailed(
                path=path + ".properties", msg="must be a map")
        self.properties = functions.parse(props, allowed,
                                          path + ".properties")
        self.metadata = functions.parse(snippet.get("metadata") or {},
                                        allowed, path + ".metadata")
        self.description = snippet.get("description", "")
        self.deletion_policy = snippet.get("deletion_policy", "Delete")
        self.update_policy = snippet.get("update_policy") or {}
        self.external_id = snippet.get("external_id")
        explicit = snippet.get("depends_on") or []
        if isinstance(explicit, str):
            explicit = [explicit]
        if not isinstance(explicit, list) or not all(
                isinstance(d, str) for d in explicit):
            raise exception.StackValidationFailed(
                path=path + ".depends_on",
                msg="depends_on must be a resource name or a list of them")
        self.explicit_depends = list(explicit)
        self.depends = set(explicit) | set(
            functions.dependencies(self.properties)) | set(
            functions.dependencies(self.metadata))

    def resolve_properties(self, scope):
        return functions.resolve(self.properties, scope)


class OutputDefinition:
    def __init__(self, name, snippet, allowed):
        path = "outputs.%s" % name
        if not isinstance(snippet, dict):
            raise exception.StackValidationFailed(
                path=path, msg="Output definition must be a mapping")
        unknown = set(snippet) - OUTPUT_KEYS
        if unknown:
            raise exception.StackValidationFailed(
                path=path, msg='"%s" is not a valid keyword inside an '
                'output definition' % sorted(unknown)[0])
        self.name = name
        self.description = snippet.get("description", "No description given")
        self.value = functions.parse(snippet.get("value"), allowed,
                                     path + ".value")


class Template:
    """A validated HOT template (static: no parameter values yet)."""

    def __init__(self, tmpl, files=None):
        self.files = files or {}
        if not isinstance(tmpl, dict):
            raise exception.InvalidTemplateVersion(
                explanation="Template format version not found.")
        if "heat_template_version" not in tmpl:
            raise exception.InvalidTemplateVersion(
                explanation="Template format version not found.")
        self.version = versions.normalise(tmpl["heat_template_version"])
        allowed = versions.FUNCTIONS[self.version]
        for section in tmpl:
            if section not in SECTIONS:
                raise exception.InvalidTemplateSection(section=section)
        self.raw = tmpl
        self.description = tmpl.get("description", "No description")
        self.parameters = parameters.parse_schema(tmpl.get("parameters"))
        resources = tmpl.get("resources") or {}
        if not isinstance(resources, dict):
            raise exception.StackValidationFailed(
                path="resources", msg="The resources section must be a map")
        self.resources = collections.OrderedDict(
            (name, ResourceDefinition(name, snippet, allowed))
            for name, snippet in resources.items())
        outputs = tmpl.get("outputs") or {}
        if not isinstance(outputs, dict):
            raise exception.StackValidationFailed(
                path="outputs", msg="The outputs section must be a map")
        self.outputs = collections.OrderedDict(
            (name, OutputDefinition(name, snippet, allowed))
            for name, snippet in outputs.items())
        self.dependency_graph()

    def dependency_graph(self):
        """Return the Graph of resource names (a requires b).

        :raises InvalidTemplateReference: for a reference to an unknown
            resource.
        :raises CircularDependencyException: naming the cycle.
        """
        g = graph.Graph()
        for name, defn in self.resources.items():
            g.add_node(name)
            for dep in sorted(defn.depends):
                if dep not in self.resources:
                    raise exception.InvalidTemplateReference(
                        resource=dep, key="resources.%s" % name)
                g.add_edge(name, dep)
        g.topological_order()
        return g

    def bind(self, environment, stack_info):
        """Return the template bound to parameter values and a stack.

        :param environment: a parsed environment (``environment.parse``).
        :param stack_info: {"name", "id", "project_id"} of the stack.
        :raises UnknownUserParameter, UserParameterMissing,
            StackValidationFailed: for bad parameter values.
        """
        return BoundTemplate(self, environment, stack_info)


class BoundTemplate:
    """A template with parameter values: what the engine converges to."""

    def __init__(self, template, environment, stack_info):
        self.template = template
        self.environment = environment
        self.stack_info = stack_info
        self.parameters = parameters.resolve_values(
            template.parameters, environment.get("parameters"),
            environment.get("parameter_defaults"))
        self.resources = template.resources
        self.outputs = template.outputs
        self.description = template.description

    def param(self, name):
        """The value of parameter ``name`` (pseudo parameters included).

        :raises UserParameterMissing: for an unknown name.
        """
        pseudo = {"OS::stack_name": self.stack_info.get("name"),
                  "OS::stack_id": self.stack_info.get("id"),
                  "OS::project_id": self.stack_info.get("project_id")}
        if name in pseudo:
            return pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        raise exception.UserParameterMissing(key=name)

    def file(self, key):
        if key not in self.template.files:
            raise exception.NotFound(
                message="Could not fetch remote template '%s'" % key)
        return self.template.files[key]

    def parameters_display(self):
        """{name: string} as stack show prints them (hidden masked)."""
        shown = {"OS::stack_name": self.stack_info.get("name") or "",
                 "OS::stack_id": self.stack_info.get("id") or "None",
                 "OS::project_id": self.stack_info.get("project_id") or ""}
        for name, param in self.template.parameters.items():
            shown[name] = param.display(self.parameters.get(name))
        return shown

    def dependency_graph(self):
        return self.template.dependency_graph()
