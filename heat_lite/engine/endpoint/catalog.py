"""What the engine knows apart from stacks: template validation, template
versions and functions, the installed resource types (list, schema,
generated template), the engine services and the engine's revision.

Mixed into ``service.EngineService``.
"""

import re

from heat_lite import conf, version
from heat_lite.common import exception
from heat_lite.db import models
from heat_lite.db import services as db_services
from heat_lite.engine import validation
from heat_lite.engine.endpoint import nested_parameters, views
from heat_lite.engine.endpoint.base import TARGET, expected
from heat_lite.engine.template import registry as tmpl_registry
from heat_lite.engine.template import validate as tmpl_validate
from heat_lite.engine.template import versions as tmpl_versions
from heat_lite.resources import properties, registry

CONF = conf.CONF
SUPPORT_STATUS = {
    "status": "SUPPORTED",
    "version": None,
    "message": None,
    "previous_status": None,
}
_SHOW = "Detailed information about resource."
# Property type → (CFN parameter type, HOT parameter type).
_PARAM_TYPES = {
    properties.STRING: ("String", "string"),
    properties.INTEGER: ("Number", "number"),
    properties.NUMBER: ("Number", "number"),
    properties.BOOLEAN: ("Boolean", "boolean"),
    properties.MAP: ("Json", "json"),
    properties.LIST: ("CommaDelimitedList", "comma_delimited_list"),
    properties.ANY: ("Json", "json"),
}


def _description(cls):
    doc = (cls.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def _property_schema(prop):
    result = {
        "type": prop.type.lower(),
        "description": prop.description,
        "required": prop.required,
        "update_allowed": prop.update_allowed,
        "immutable": prop.immutable,
        "constraints": [],
    }
    if prop.default is not None:
        result["default"] = prop.default
    if isinstance(prop.schema, dict):
        result["schema"] = {
            k: _property_schema(v) for k, v in prop.schema.items()
        }
    return result


def _attributes(cls):
    attrs = {}
    for name, value in (cls.attributes_schema or {}).items():
        text = (
            value
            if isinstance(value, str)
            else getattr(value, "description", "")
        )
        attrs[name] = {"description": text or ""}
    attrs.setdefault("show", {"description": _SHOW, "type": "map"})
    return attrs


def _type_class(type_name):
    try:
        return registry.get_class(type_name)
    except exception.ResourceTypeUnavailable:
        raise exception.EntityNotFound(
            entity="Resource Type", name=type_name
        ) from None


def _resource_name(type_name):
    """The resource's name in a type's template, as Heat names it: the
    type's last part (``OS::Heat::TestResource`` -> ``TestResource``)."""
    return type_name.split("::")[-1]


def _hot_template(type_name, cls):
    props = cls.properties_schema or {}
    name = _resource_name(type_name)
    return {
        "heat_template_version": "2016-10-14",
        "description": "Initial template of %s" % type_name,
        "parameters": {
            n: {"type": _PARAM_TYPES[p.type][1], "description": p.description}
            for n, p in props.items()
        },
        "resources": {
            name: {
                "type": type_name,
                "properties": {n: {"get_param": n} for n in props},
            }
        },
        "outputs": {
            n: {
                "description": a["description"],
                "value": {"get_attr": [name, n]},
            }
            for n, a in _attributes(cls).items()
        },
    }


def _cfn_template(type_name, cls):
    props = cls.properties_schema or {}
    name = _resource_name(type_name)
    return {
        "HeatTemplateFormatVersion": "2012-12-12",
        "Description": "Initial template of %s" % type_name,
        "Parameters": {
            n: {"Type": _PARAM_TYPES[p.type][0], "Description": p.description}
            for n, p in props.items()
        },
        "Resources": {
            name: {
                "Type": type_name,
                "Properties": {n: {"Ref": n} for n in props},
            }
        },
        "Outputs": {
            n: {
                "Description": a["description"],
                "Value": {"Fn::GetAtt": [name, n]},
            }
            for n, a in _attributes(cls).items()
        },
    }


def _declared(template):
    """The parameter names a raw template declares (HOT or CFN)."""
    if not isinstance(template, dict):
        return []
    params = template.get("parameters", template.get("Parameters"))
    return list(params) if isinstance(params, dict) else []


class CatalogEndpoint:
    """Templates, resource types, services and revision."""

    target = TARGET

    @expected
    def validate_template(
        self,
        ctxt,
        template,
        params,
        files,
        environment,
        environment_files,
        show_nested=False,
    ):
        env = validation.environment(
            environment, params, environment_files, files
        )
        info = {
            "name": "validate",
            "id": "None",
            "project_id": ctxt.project_id,
            # As Heat (not strict): a template validates without values
            # for its parameters (Horizon's launch form asks for them
            # after validating) and with values that do not fit them;
            # what they would feed is not checked.
            "unknown_parameters": _declared(template),
        }
        bound = validation.bind(template, env, files, info)
        doc = tmpl_validate.document(bound.template, env)
        registry = doc["Environment"]["resource_registry"]
        for defn in bound.resources.values():
            # As Heat's registry does when a template names a file as a
            # type: the file is registered as a type of its own.
            if tmpl_registry.is_template(defn.type):
                registry.setdefault(defn.type, defn.type)
        if show_nested:
            stack = dict(info, tenant=ctxt.project_id, nested_depth=0)
            found = nested_parameters.nested_parameters(stack, bound)
            if found:
                doc["NestedParameters"] = found
        return doc

    @expected
    def list_template_versions(self, ctxt):
        return tmpl_versions.list_versions()

    @expected
    def list_template_functions(
        self, ctxt, template_version, with_condition_func=False
    ):
        return tmpl_versions.list_functions(
            template_version, with_condition_func
        )

    @expected
    def list_resource_types(
        self,
        ctxt,
        support_status=None,
        type_name=None,
        heat_version=None,
        with_description=False,
    ):
        try:
            pattern = re.compile(type_name) if type_name else None
        except (re.error, TypeError):
            raise exception.Invalid(
                message="Invalid resource type name pattern %s" % type_name
            ) from None
        if support_status and support_status.upper() != "SUPPORTED":
            return []
        types = registry.load()
        names = [
            n
            for n in sorted(types)
            if (pattern is None or pattern.match(n))
            and not types[n].hidden_type
        ]
        if with_description:
            return [
                {"resource_type": n, "description": _description(types[n])}
                for n in names
            ]
        return names

    @expected
    def resource_schema(self, ctxt, type_name, with_description=False):
        cls = _type_class(type_name)
        result = {
            "resource_type": type_name,
            "properties": {
                n: _property_schema(p)
                for n, p in (cls.properties_schema or {}).items()
            },
            "attributes": _attributes(cls),
            "support_status": dict(SUPPORT_STATUS),
        }
        if with_description:
            result["description"] = _description(cls)
        return result

    @expected
    def generate_template(self, ctxt, type_name, template_type="cfn"):
        cls = _type_class(type_name)
        if template_type == "hot":
            return _hot_template(type_name, cls)
        if template_type == "cfn":
            return _cfn_template(type_name, cls)
        raise exception.Invalid(
            message="Template type is not supported: %s" % template_type
        )

    @expected
    def list_services(self, ctxt):
        now = models.utcnow()
        return [
            views.service(
                svc,
                (now - svc["updated_at"]).total_seconds()
                <= CONF.engine.engine_life_check_timeout,
            )
            for svc in db_services.service_get_all()
        ]

    @expected
    def get_revision(self, ctxt):
        return version.version_string()
