"""Previews: what a create or an update would do, without doing it.

Pure functions of a bound template and the stored records (read, never
written). ``create_resources`` lists the resources a new stack would get;
``update_changes`` sorts the resources of an update into Heat's five
lists — added, deleted, replaced, updated, unchanged — with the same
decision the worker makes (``check.NodeRunner._update``): a type change,
a failed record that must be replaced, the plugin's ``needs_replace`` or
a changed property that is not ``update_allowed`` mean replacement; any
other change of properties or metadata is an in-place update.
"""

from heat_lite.common import exception
from heat_lite.engine import definitions, validation, views

CHANGE_KINDS = ("added", "deleted", "replaced", "unchanged", "updated")


def _required_by(bound):
    result = {}
    for name, defn in bound.resources.items():
        for dep in defn.depends:
            result.setdefault(dep, []).append(name)
    return result


def _blank_record(stack, defn):
    """A record as it would be before creation (INIT_COMPLETE)."""
    return {
        "name": defn.name,
        "type": defn.type,
        "action": "INIT",
        "status": "COMPLETE",
        "status_reason": "",
        "physical_resource_id": "",
        "created_at": None,
        "updated_at": None,
        "attr_data": None,
        "uuid": None,
        "stack_id": stack["id"],
    }


def _properties(bound, defn, scope):
    cls = definitions.plugin_class(bound.environment, defn.name, defn.type)
    return cls, cls.validate_properties(
        defn.resolve_properties(scope), "resources.%s.properties" % defn.name
    )


def create_resources(stack, bound):
    """The resources of a stack about to be created, in engine format
    with their ``properties`` and ``metadata`` (references resolve to
    resource names, as nothing exists yet)."""
    scope = validation.ValidationScope(bound)
    deps = _required_by(bound)
    result = []
    for name, defn in bound.resources.items():
        _cls, props = _properties(bound, defn, scope)
        item = views.engine_resource(
            _blank_record(stack, defn), stack, deps.get(name, ())
        )
        item.update(
            description=defn.description or "",
            properties=props,
            metadata=defn.resolve_metadata(scope),
        )
        result.append(item)
    return result


def _kind(bound, old_bound, defn, record, scope):
    """One of CHANGE_KINDS for a resource present before and after."""
    if record["action"] in ("INIT", "DELETE") or record["type"] != defn.type:
        return "replaced"
    cls, props = _properties(bound, defn, scope)
    plugin = definitions.plugin_for(record)
    if type(plugin) is not cls:
        return "replaced"
    if record["status"] == "FAILED" and plugin.needs_replace_failed(
        record["action"]
    ):
        return "replaced"
    old_props = plugin.properties
    diff = {
        k
        for k in set(props) | set(old_props)
        if props.get(k) != old_props.get(k)
    }
    schema = cls.properties_schema or {}
    if diff and (
        plugin.needs_replace(props, diff)
        or any(k in schema and not schema[k].update_allowed for k in diff)
    ):
        return "replaced"
    if diff or _metadata_changed(old_bound, defn, scope):
        return "updated"
    return "unchanged"


def _metadata_changed(old_bound, defn, scope):
    old = old_bound.resources.get(defn.name) if old_bound else None
    if old is None:
        return bool(defn.metadata)
    try:
        before = old.resolve_metadata(
            definitions.RecordScope(old_bound, scope.records)
        )
    except exception.HeatLiteException:
        return True
    return before != defn.resolve_metadata(scope)


def update_changes(stack, bound, old_bound, records):
    """{kind: [resource in engine format]} for an update to ``bound``.

    :param old_bound: the stack's current BoundTemplate (or None).
    :param records: {name: current record} of the stack.
    """
    changes = {kind: [] for kind in CHANGE_KINDS}
    scope = definitions.RecordScope(bound, records)
    deps = _required_by(bound)
    for name, defn in bound.resources.items():
        record = records.get(name)
        if record is None:
            kind, record = "added", _blank_record(stack, defn)
            _properties(bound, defn, scope)
        else:
            kind = _kind(bound, old_bound, defn, record, scope)
        item = views.engine_resource(record, stack, deps.get(name, ()))
        item["resource_type"] = defn.type
        item["description"] = defn.description or ""
        changes[kind].append(item)
    for name, record in records.items():
        if name not in bound.resources:
            changes["deleted"].append(views.engine_resource(record, stack))
    return changes
