"""Template resources: a type that names a template file in ``files``
(directly, or through the environment's resource_registry) becomes a
nested stack of that template. Its properties are the template's
parameters and its attributes the template's outputs."""

import hashlib
import json
import threading

from heat_lite import conf
from heat_lite.common import exception, template_format
from heat_lite.resources import properties as p
from heat_lite.resources import stack_resource

_LOCK = threading.Lock()
_CLASSES = {}


def _load(content):
    if isinstance(content, dict):
        return content
    loaded = template_format.parse(
        content,
        conf.CONF.max_template_size,
        "Template",
        exception.StackValidationFailed,
    )
    if not isinstance(loaded, dict):
        raise exception.StackValidationFailed(
            msg="The template is not a mapping"
        )
    return loaded


def _schema(template):
    """Properties from the template's parameters. Defaults stay with the
    child template: a property not given is not passed, so the child's
    own default or the environment's parameter_defaults apply."""
    props = {}
    for name, param in (template.get("parameters") or {}).items():
        param = param if isinstance(param, dict) else {}
        props[name] = p.Schema(
            p.ANY,
            param.get("description", ""),
            required="default" not in param,
            update_allowed=True,
        )
    return props


class TemplateResource(stack_resource.StackResource):
    """Base of the classes ``for_template`` makes, one per template."""

    template_key = None
    template = None

    def child_template(self):
        params = {k: v for k, v in self.properties.items() if v is not None}
        return self.template, params

    def _resolve_attribute(self, name):
        outputs = self.child_outputs()
        if name in outputs:
            return outputs[name]
        if name.startswith("resource."):
            return self._member_attribute(name.split(".", 2)[1:])
        return None

    def _member_attribute(self, parts):
        members = self.nested_stacks.members(self.resource_id)
        member = members.get(parts[0])
        if member is None:
            return None
        reference, attrs = member
        return attrs.get(parts[1]) if len(parts) > 1 else reference

    def get_reference_id(self):
        """The child's ``OS::stack_id`` output if it has one, else its
        ARN (a group's get_resource, by contrast, is its child's id)."""
        if not self.resource_id:
            return self.name
        outputs = self.template.get("outputs") or {}
        if "OS::stack_id" in outputs:
            return self.child_outputs().get("OS::stack_id")
        return self.child_arn()


def for_template(key, content):
    """The TemplateResource subclass for template file ``key``."""
    template = _load(content)
    digest = hashlib.sha256(
        json.dumps(template, sort_keys=True, default=str).encode()
    ).hexdigest()
    with _LOCK:
        cls = _CLASSES.get((key, digest))
        if cls is None:
            outputs = template.get("outputs") or {}
            cls = type(
                "TemplateResource",
                (TemplateResource,),
                {
                    "template_key": key,
                    "template": template,
                    "properties_schema": _schema(template),
                    "attributes_schema": {
                        name: p.Attribute((out or {}).get("description", ""))
                        for name, out in outputs.items()
                        if isinstance(out, dict) or out is None
                    },
                },
            )
            _CLASSES[(key, digest)] = cls
        return cls
