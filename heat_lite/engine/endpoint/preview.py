"""Previews: what a create or an update would do, without doing it.

Functions of a bound template and the stored records (read, never
written). ``create_resources`` lists the resources a new stack would get,
a resource that owns a nested stack (template resource, group) giving
the nested list of its child's resources, as Heat's preview does.
``update_changes`` sorts the resources of an update into Heat's five
lists — added, deleted, replaced, updated, unchanged — with the same
decision the worker makes (``update_phase.UpdatePhase``): a type change,
a failed record that must be replaced, the plugin's ``needs_replace`` or
a changed property that is not ``update_allowed`` mean replacement; a
resource owning a nested stack is otherwise always updated (its child
decides); any other change of properties or metadata is an in-place
update. With ``show_nested`` the child stacks' own changes are appended
to the same lists (``_Nested``), as Heat's ``show_nested`` does.
"""

import json

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions, validation
from heat_lite.engine.drift import revert
from heat_lite.engine.endpoint import views
from heat_lite.engine.template import constraints as tmpl_constraints
from heat_lite.engine.traversal import nested
from heat_lite.resources import stack_resource, template_resource

CONF = conf.CONF
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
        "action": Action.INIT,
        "status": Status.COMPLETE,
        "status_reason": "",
        "physical_resource_id": "",
        "created_at": None,
        "updated_at": None,
        "attr_data": None,
        "uuid": None,
        "stack_id": stack["id"],
    }


def owns_stack(cls):
    return issubclass(cls, stack_resource.StackResource)


def item(record, stack, required_by=()):
    """A resource in engine format; ``parent_resource`` inside a nested
    stack (``stack`` carries ``parent_resource_name``)."""
    result = views.engine_resource(record, stack, required_by)
    if stack.get("parent_resource_name"):
        result["parent_resource"] = stack["parent_resource_name"]
    return result


def properties(bound, defn, scope):
    """(plugin class, validated properties) of a resource definition.

    A property whose function has no value yet (a ``get_attr`` of a
    resource not created) is shown as null and not checked, as in Heat's
    previews, rather than failing as "not assigned".
    """
    cls = definitions.plugin_class(
        bound.environment, defn.name, defn.type, bound.files
    )
    values = defn.resolve_properties(scope) or {}
    raw = defn.properties if isinstance(defn.properties, dict) else {}
    pending = [
        k
        for k, v in values.items()
        if v is None and validation.has_function(raw.get(k))
    ]
    result = cls.validate_properties(
        {k: v for k, v in values.items() if k not in pending},
        "resources.%s.properties" % defn.name,
        pending,
    )
    result.update(dict.fromkeys(pending))
    return cls, result


class Budget:
    """The resources a preview may show across its whole tree of nested
    stacks: ``max_resources_per_stack``, which a create counts over the
    whole tree too, so that a preview never builds more than a create
    could (a group of groups would otherwise multiply its counts)."""

    def __init__(self, bound):
        self.left = CONF.max_resources_per_stack
        self.spend(len(bound.resources))

    def spend(self, count):
        """:raises RequestLimitExceeded: once the tree is too big."""
        if self.left == -1:
            return
        self.left -= count
        if self.left < 0:
            raise exception.RequestLimitExceeded(
                message="Maximum resources per stack exceeded."
            )


def child_preview(
    stack,
    bound,
    defn,
    cls,
    props,
    budget,
    record=None,
    stack_id=None,
    check=True,
    services=None,
):
    """(stack dict, BoundTemplate) of the child stack a resource owning a
    nested stack would converge on, named ``<parent>-<resource>`` as in
    Heat's previews.

    :param budget: the Budget of the preview, charged for the child.
    :param record: the resource's current record, if any (a group keeps
        its removed members in its data).
    :param stack_id: the id to show for the child (the real child's when
        it exists, else "None").
    :param check: check the child's resources as a create would (False:
        bind only, as a validate's ``show_nested`` does in Heat).
    :param services: the plugins' services when the resource exists
        (``definitions.plugin_for``; None: it does not yet).
    :raises StackValidationFailed: for a bad child template or nesting
        deeper than ``max_nested_stack_depth``.
    :raises RequestLimitExceeded: past the budget.
    """
    depth = stack.get("nested_depth", 0) + 1
    if depth > CONF.max_nested_stack_depth:
        raise exception.StackValidationFailed(
            msg="Recursion depth exceeds %d." % CONF.max_nested_stack_depth
        )
    plugin = cls(
        defn.name,
        defn.type,
        props,
        record["physical_resource_id"] if record else None,
        json.loads(record["rsrc_data"] or "{}") if record else None,
        stack={
            "name": stack["name"],
            "id": stack["id"],
            "tenant": stack["tenant"],
        },
        services=services,
    )
    plugin.update_policy = defn.update_policy or {}
    template, params = plugin.child_template()
    env = validation.environment(
        nested.child_environment(bound.environment, defn.name, params), None
    )
    child = {
        "name": "%s-%s" % (stack["name"], defn.name),
        "id": stack_id or "None",
        "tenant": stack["tenant"],
        "parent_resource_name": defn.name,
        "nested_depth": depth,
    }
    info = definitions.stack_info(child)
    # A property that is an attribute of a resource not created yet: the
    # child's parameter shows as null, as in Heat's preview.
    info["unknown_parameters"] = [k for k, v in props.items() if v is None]
    if check:
        child_bound = validation.bind(template, env, bound.files, info)
    else:
        child_bound = definitions.bind(template, env, bound.files, info)
    budget.spend(len(child_bound.resources))
    return child, child_bound


def create_resources(stack, bound, budget=None):
    """The resources of a stack about to be created, in engine format
    with their ``properties`` and ``metadata`` (references resolve to
    resource names, as nothing exists yet); a nested stack gives the
    list of its own resources in place of the resource that owns it."""
    budget = budget or Budget(bound)
    scope = validation.ValidationScope(bound)
    deps = _required_by(bound)
    result = []
    for name, defn in bound.resources.items():
        cls, props = properties(bound, defn, scope)
        if owns_stack(cls):
            with tmpl_constraints.custom_checks_skipped():
                child, child_bound = child_preview(
                    stack, bound, defn, cls, props, budget
                )
                result.append(create_resources(child, child_bound, budget))
            continue
        entry = item(_blank_record(stack, defn), stack, deps.get(name, ()))
        entry.update(
            description=defn.description or "",
            properties=props,
            metadata=defn.resolve_metadata(scope),
            # Every attribute the resource will have, none known yet (as
            # in Heat's preview).
            attributes=dict.fromkeys(cls.attributes()),
        )
        result.append(entry)
    return result


def _same_class(old, new):
    """Whether an update keeps the plugin class. Template resources are
    one kind whatever their template says (as in Heat): a changed
    template is an update of the child, not a replacement."""
    template = template_resource.TemplateResource
    return old is new or (
        issubclass(old, template) and issubclass(new, template)
    )


def kind(old_bound, defn, record, cls, props, scope):
    """One of CHANGE_KINDS for a resource present before and after."""
    if record["action"] in (Action.INIT, Action.DELETE):
        return "replaced"
    if not definitions.keeps_kind(record, defn.type, cls):
        return "replaced"
    plugin = definitions.plugin_for(record, scope.services)
    if not _same_class(type(plugin), cls):
        return "replaced"
    if record["status"] == Status.FAILED and plugin.needs_replace_failed(
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
    if diff or owns_stack(cls) or _metadata_changed(old_bound, defn, scope):
        return "updated"
    return "unchanged"


def _metadata_changed(old_bound, defn, scope):
    old = old_bound.resources.get(defn.name) if old_bound else None
    if old is None:
        return bool(defn.metadata)
    try:
        before = old.resolve_metadata(
            definitions.RecordScope(old_bound, scope.records, scope.services)
        )
    except exception.HeatLiteException:
        return True
    return before != defn.resolve_metadata(scope)


def update_changes(
    stack,
    bound,
    old_bound,
    records,
    services,
    show_nested=False,
    shown=None,
    budget=None,
    drift=None,
):
    """{kind: [resource in engine format]} for an update to ``bound``.

    As in Heat, ``updated`` and ``deleted`` resources are shown as they
    are now, the others as the update would make them (INIT_COMPLETE, no
    physical id).

    :param old_bound: the stack's current BoundTemplate (or None).
    :param records: {name: current record} of the stack.
    :param services: the plugins' services (``definitions.plugin_for``).
    :param show_nested: append the changes inside nested stacks.
    :param shown: the stack the new resources are shown in (default
        ``stack``; a nested one is named after its parent's preview).
    :param budget: the Budget of the whole preview (a new one at the
        top).
    :param drift: (entries, reverting): {name: drift report entry} of
        the stack's drifted resources (a CURRENT report) and whether the
        update reverts them: each such resource gets a ``drift`` section
        (``drift.revert.section``), and with ``reverting`` the kind the
        worker's decision gives from its live values (``as_live``).
    """
    entries, reverting = drift or ({}, False)
    shown = shown or stack
    changes = {k: [] for k in CHANGE_KINDS}
    scope = definitions.RecordScope(bound, records, services)
    deps = _required_by(bound)
    walk = _Nested(bound, shown, budget or Budget(bound), services)
    for name, defn in bound.resources.items():
        record = records.get(name)
        cls, props = properties(bound, defn, scope)
        drifted = entries.get(name) if record is not None else None
        decided = record
        if drifted is not None and reverting:
            decided = revert.as_live(record, drifted)
        found = (
            "added"
            if record is None
            else kind(old_bound, defn, decided, cls, props, scope)
        )
        if found == "updated":
            entry = item(record, stack, deps.get(name, ()))
        else:
            entry = item(_blank_record(shown, defn), shown, deps.get(name, ()))
        entry["resource_type"] = defn.type
        entry["description"] = defn.description or ""
        if drifted is not None:
            entry["drift"] = revert.section(
                drifted, _stored(record), props, reverting
            )
        changes[found].append(entry)
        if show_nested:
            walk.note(found, defn, cls, props, record)
    for name, record in records.items():
        if name not in bound.resources:
            changes["deleted"].append(item(record, stack))
            if name in entries:
                changes["deleted"][-1]["drift"] = revert.section(
                    entries[name], _stored(record), None, False
                )
            if show_nested:
                walk.note("deleted", None, None, None, record)
    if show_nested:
        walk.merge_into(changes)
    return changes


class _Nested:
    """The changes inside the nested stacks of one stack's update, as
    Heat's ``show_nested`` adds them: every resource of the child of a
    deleted or replaced resource is deleted, every resource of the new
    child of an added or replaced one is added, and the child of an
    updated one is previewed as an update of its own (recursively)."""

    def __init__(self, bound, shown, budget, services):
        self.bound = bound
        self.shown = shown
        self.budget = budget
        self.services = services
        self.changes = {k: [] for k in CHANGE_KINDS}

    def note(self, found, defn, cls, props, record):
        """Take in one resource of the parent and its change ``found``."""
        if found in ("deleted", "replaced"):
            self._deleted(_child_row(record))
        if found in ("added", "replaced") and owns_stack(cls):
            # A new child: nothing in it exists yet (create_resources).
            with tmpl_constraints.custom_checks_skipped():
                self._added(
                    *child_preview(
                        self.shown, self.bound, defn, cls, props, self.budget
                    )
                )
        if found == "updated" and owns_stack(cls):
            row = _child_row(record)
            if row is not None:
                self._updated(row, defn, cls, props, record)

    def merge_into(self, changes):
        for key, items in self.changes.items():
            changes[key].extend(items)

    def _deleted(self, row):
        if row is None:
            return
        for record in definitions.current_records(row).values():
            self.changes["deleted"].append(item(record, row))
            self._deleted(_child_row(record))

    def _added(self, child, child_bound):
        scope = validation.ValidationScope(child_bound)
        for defn in child_bound.resources.values():
            self.changes["added"].append(
                item(_blank_record(child, defn), child)
            )
            cls, props = properties(child_bound, defn, scope)
            if owns_stack(cls):
                self._added(
                    *child_preview(
                        child, child_bound, defn, cls, props, self.budget
                    )
                )

    def _updated(self, row, defn, cls, props, record):
        shown, child_bound = child_preview(
            self.shown,
            self.bound,
            defn,
            cls,
            props,
            self.budget,
            record,
            row["id"],
            services=self.services,
        )
        try:
            old_bound = definitions.get(
                row["raw_template_id"], definitions.stack_info(row)
            )
        except exception.HeatLiteException:
            old_bound = None
        inner = update_changes(
            row,
            child_bound,
            old_bound,
            definitions.current_records(row),
            self.services,
            show_nested=True,
            shown=shown,
            budget=self.budget,
        )
        for key, items in inner.items():
            self.changes[key].extend(items)


def _stored(record):
    return json.loads(record["properties_data"] or "{}")


def _child_row(record):
    """The live child stack a record's resource owns, or None."""
    if record is None or not record.get("physical_resource_id"):
        return None
    if not owns_stack(definitions.record_class(record)):
        return None
    try:
        row = db_stacks.stack_get(
            record["physical_resource_id"], show_deleted=False
        )
    except exception.StackNotFound:
        return None
    return row if row["owner_id"] == record["stack_id"] else None
