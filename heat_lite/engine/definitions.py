"""Parsed, bound templates cached by template id, and the engine's Scope.

Stored templates are immutable, so each engine process parses and binds a
template once and keeps it (a small LRU). The ``RecordScope`` resolves
``get_resource`` and ``get_attr`` from the records a node depends on.
"""

import collections
import copy
import json
import threading

from heat_lite.common import exception
from heat_lite.common.states import Action
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.db import templates as db_templates
from heat_lite.engine import graph, template
from heat_lite.engine.template import environment as env_mod
from heat_lite.engine.template import functions
from heat_lite.engine.template import registry as type_registry
from heat_lite.resources import base, registry, template_resource

_CACHE_SIZE = 256
_LOCK = threading.Lock()
_CACHE = collections.OrderedDict()
# template id -> lock held by the thread that is parsing it
_LOADING = {}


def bind(tmpl, environment, files, stack_info):
    """Parse and bind a template given as documents (no caching)."""
    parsed = template.parse(tmpl, files)
    bound = parsed.bind(env_mod.parse(environment), stack_info)
    _add_implicit_depends(bound)
    return bound


def _add_implicit_depends(bound):
    """Add the dependencies plugins declare with ``implicit_depends``
    (a server waits for the subnets of its networks). Here, on the one
    path every engine binds a template through, so that all agree on
    the graph."""
    classes = {}
    for name, defn in bound.resources.items():
        try:
            classes[name] = plugin_class(
                bound.environment, name, defn.type, bound.files
            )
        except exception.ResourceTypeUnavailable:
            classes[name] = None  # validation reports it
    hooks = {
        name: cls.implicit_depends
        for name, cls in classes.items()
        if getattr(cls, "implicit_depends", None) is not None
    }
    added = False
    for name, hook in hooks.items():
        defn = bound.resources[name]
        others = {
            other: (classes[other], odefn)
            for other, odefn in bound.resources.items()
            if other != name
        }
        extra = set(hook(defn, others, bound.param)) - defn.depends
        if extra:
            defn = copy.copy(defn)
            defn.depends = defn.depends | extra
            bound.resources[name] = defn
            added = True
    if added:
        # An added edge may close a cycle (a subnet that reads a server's
        # attribute): CircularDependencyException, as Heat says.
        g = graph.Graph()
        for name, defn in bound.resources.items():
            g.add_node(name)
            for dep in defn.depends:
                g.add_edge(name, dep)
        g.topological_order()


def cached(template_id):
    """The BoundTemplate of ``template_id`` if this process has it."""
    with _LOCK:
        bound = _CACHE.get(template_id)
        if bound is not None:
            _CACHE.move_to_end(template_id)
        return bound


def remember(template_id, bound):
    """Cache ``bound``, the template stored as ``template_id`` (a process
    that just bound it to start a traversal saves its nodes reading and
    parsing it again)."""
    with _LOCK:
        _CACHE[template_id] = bound
        _CACHE.move_to_end(template_id)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


def _stored_environment(row):
    """The environment of a stored template. An empty template stored
    by a create's rollback before 2026-12-05 kept the create's parameter
    values, which it does not declare: binding it failed, and the stack
    could not be shown or updated. Those values are dropped here."""
    env = row["environment"]
    template = row["template"] or {}
    if (
        env
        and env.get("parameters")
        and "parameters" not in template
        and "Parameters" not in template
    ):
        return dict(env, parameters={})
    return env


def get(template_id, stack_info):
    """Return the BoundTemplate of stored template ``template_id``.

    Single flight: when many worker threads miss the cache for the same
    template at once (the first nodes of a big traversal), one parses it
    and the others wait for its result instead of each parsing it too.
    """
    bound = cached(template_id)
    if bound is not None:
        return bound
    with _LOCK:
        loading = _LOADING.setdefault(template_id, threading.Lock())
    try:
        with loading:
            bound = cached(template_id)
            if bound is None:
                row = db_templates.raw_template_get(template_id)
                bound = bind(
                    row["template"],
                    _stored_environment(row),
                    row["files"],
                    stack_info,
                )
                remember(template_id, bound)
    finally:
        with _LOCK:
            _LOADING.pop(template_id, None)
    return bound


def stack_info(stack):
    """The stack_info dict of a stack row (or a joined record row)."""
    return {
        "name": stack.get("stack_name", stack.get("name")),
        "id": stack.get("stack_id", stack.get("id")),
        "project_id": stack.get("stack_tenant", stack.get("tenant")),
    }


def plugin_class(environment, resource_name, type_name, files=None):
    """The plugin class a resource's type maps to through the registry.

    A type that names a template file (directly or through the registry)
    gives a template-resource class whose properties are that template's
    parameters.

    :raises ResourceTypeUnavailable: for an unknown type or a template
        file missing from ``files``.
    """
    impl = type_registry.resolve_type(environment, resource_name, type_name)
    if type_registry.is_template(impl):
        if not files or impl not in files:
            raise exception.ResourceTypeUnavailable(type_name=impl)
        return template_resource.for_template(impl, files[impl])
    return registry.get_class(impl)


def keeps_kind(record, new_type, new_cls):
    """Whether ``record`` can be updated in place into a resource of
    ``new_type`` (plugin class ``new_cls``), or must be replaced.

    The same type keeps its kind. Two template resources are one kind
    whatever their templates (as in Heat): a resource whose template file
    changed is an update of its child stack, not a replacement. The old
    class is resolved only when the type names differ, so an in-place
    update costs nothing more.
    """
    if record["type"] == new_type:
        return True
    template = template_resource.TemplateResource
    return issubclass(new_cls, template) and issubclass(
        record_class(record), template
    )


def record_class(record):
    """The plugin class of a stored record, resolved through the
    environment of the template the record was made with."""
    try:
        bound = get(record["template_id"], stack_info(record))
        return plugin_class(
            bound.environment, record["name"], record["type"], bound.files
        )
    except exception.HeatLiteException:
        return base.Resource


def plugin_for(record, services, props=None):
    """A plugin instance for a stored record (its stored properties).

    The one place that makes plugin instances of records: each is given
    ``services`` (``resources.services.Services``: the engine process's
    ``plugin_services.EngineServices``), what it may ask of the engine.
    A record of a type no longer installed still gets a plain
    ``Resource`` so that it can be listed and deleted.
    """
    cls = record_class(record)
    if props is None:
        props = json.loads(record["properties_data"] or "{}")
    return cls(
        record["name"],
        record["type"],
        props,
        record["physical_resource_id"],
        json.loads(record["rsrc_data"] or "{}"),
        stack=stack_of(record),
        services=services,
    )


def stack_of(record):
    """The ``stack`` a plugin of ``record`` is given."""
    return {
        "name": record.get("stack_name"),
        "id": record["stack_id"],
        "tenant": record.get("stack_tenant"),
        # keystone mode: the stored trust (engine.trusts) when the
        # record was read with its stack's columns.
        "trust": record.get("stack_trust"),
        "template_id": record["template_id"],
        "record_uuid": record["uuid"],
    }


class RecordScope(functions.Scope):
    """Resolve functions against the bound template and stored records.

    :param records: {name: record dict} of the resources that may be
        referenced (a node's dependencies, or all current records).
    :param services: the plugins' services (``plugin_for``), for what a
        plugin resolves itself (a child stack's outputs).
    """

    def __init__(self, bound, records, services):
        self.bound = bound
        self.records = records
        self.services = services

    def param(self, name):
        return self.bound.param(name)

    def file(self, key):
        return self.bound.file(key)

    def facade(self, kind):
        """``resource_facade``: the parent resource's metadata,
        deletion_policy or update_policy (None outside a nested stack)."""
        stack = db_stacks.stack_get(self.bound.stack_info["id"])
        if not stack["owner_id"]:
            return None
        parent = db_stacks.stack_get(stack["owner_id"])
        parent_bound = get(parent["raw_template_id"], stack_info(parent))
        defn = parent_bound.resources.get(stack["parent_resource_name"])
        if defn is None:
            return None
        if kind == "metadata":
            return functions.resolve(
                defn.metadata, RecordScope(parent_bound, {}, self.services)
            )
        return getattr(defn, kind, None)

    def reference_id(self, resource_name):
        record = self.records.get(resource_name)
        if record is None or not record.get("physical_resource_id"):
            return resource_name
        return plugin_for(record, self.services).get_reference_id()

    def attribute(self, resource_name, attribute, path):
        record = self.records.get(resource_name)
        if record is None or record["action"] in (Action.INIT, Action.DELETE):
            return None
        attrs = json.loads(record["attr_data"] or "{}")
        if attribute is None:
            return attrs
        if attribute not in attrs:
            # Not cached (e.g. a group's ``resource.<n>.<attr>``): ask
            # the plugin.
            plugin = plugin_for(record, self.services)
            return plugin.get_attribute(attribute, path or ())
        return base.dig(attrs.get(attribute), path)


def resolve_output(bound, records, name, services):
    """One output resolved against ``records`` ({name: record}).

    Resolution errors do not fail anything: they are reported as
    ``output_error`` with a null value, as Heat does.
    """
    output = bound.outputs[name]
    item = {"output_key": name, "description": output.description}
    try:
        item["output_value"] = functions.resolve(
            output.value, RecordScope(bound, records, services)
        )
    except exception.HeatLiteException as exc:
        item["output_value"] = None
        item["output_error"] = str(exc)
    return item


def current_records(stack):
    """{name: record} of the stack's current records."""
    return {
        r["name"]: dict(r, stack_name=stack["name"])
        for r in db_records.resource_get_all(stack["id"])
    }


def resolve_outputs(stack, services):
    """The stack's outputs resolved against its current records
    (``services``: see ``plugin_for``).

    :returns: [{output_key, description, output_value[, output_error]}]
    """
    bound = get(stack["raw_template_id"], stack_info(stack))
    records = current_records(stack)
    return [
        resolve_output(bound, records, name, services)
        for name in bound.outputs
    ]
