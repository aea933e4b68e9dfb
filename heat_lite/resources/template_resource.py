"""Template resources: a type that names a template file in ``files``
(directly, or through the environment's resource_registry) becomes a
nested stack of that template. Its properties are the template's
parameters and its attributes the template's outputs."""

import collections
import copy
import hashlib
import json
import threading
import weakref

from heat_lite import conf
from heat_lite.common import exception, template_format
from heat_lite.resources import properties as p
from heat_lite.resources import stack_resource

_LOCK = threading.Lock()
_CACHE_SIZE = 256
_CLASSES = weakref.WeakValueDictionary()
_RECENT = collections.OrderedDict()


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
        # A copy: the class (and its template) is shared by every stack
        # that uses the same file.
        return copy.deepcopy(self.template), params

    def _resolve_attribute(self, name):
        if name in (self.template.get("outputs") or {}):
            return self.child_output(name)
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
    """The TemplateResource subclass for template file ``key``.

    Classes are keyed by file name and parsed content, never by project:
    the same template makes the same class for everyone, and a class
    holds nothing else. The cache is bounded: weak references (a class
    stays while a plugin or a caller holds it, so two holders always see
    the same class) plus the ``_CACHE_SIZE`` most recently used.
    """
    template = _load(content)
    digest = hashlib.sha256(
        json.dumps(template, sort_keys=True, default=str).encode()
    ).hexdigest()
    cache_key = (key, digest)
    with _LOCK:
        cls = _CLASSES.get(cache_key)
        if cls is None:
            cls = _make_class(key, template)
            _CLASSES[cache_key] = cls
        _RECENT[cache_key] = cls
        _RECENT.move_to_end(cache_key)
        while len(_RECENT) > _CACHE_SIZE:
            _RECENT.popitem(last=False)
        return cls


def _make_class(key, template):
    outputs = template.get("outputs") or {}
    return type(
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
