"""The update phase: decide what an update node does to its record.

An update node makes its record match the goal template: create it (or
adopt it, or take an ``external_id``), resume a create cut short by a
takeover, update it in place, replace it, or leave it as it is. This
module decides; ``changes.Changes`` carries the decision out, and the
SUSPEND / RESUME / CHECK walks go to ``cleanup_phase.SimpleActions``.
"""

import json

from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import records as db_records
from heat_lite.engine import cloud, definitions
from heat_lite.engine.template import registry as type_registry
from heat_lite.engine.traversal.planner import FORWARD_ONLY
from heat_lite.engine.worker import actions, cleanup_phase
from heat_lite.engine.worker import actions as actions_mod
from heat_lite.engine.worker import changes as changes_mod
from heat_lite.engine.worker import successors as successors_mod
from heat_lite.resources import base


def _checked_properties(cls, defn, scope):
    """The definition's properties, resolved and validated.

    A resource taken over by ``external_id`` is someone else's: as Heat,
    its properties are not held to what creating it would need (the
    values that do validate keep their defaults filled in).
    """
    values = defn.resolve_properties(scope)
    path = "resources.%s.properties" % defn.name
    if defn.external_id is None:
        return cls.validate_properties(values, path)
    try:
        return cls.validate_properties(values, path)
    except exception.StackValidationFailed:
        return values


def runs(record, traversal):
    """Whether an update node of ``record`` has anything to do."""
    return (
        record["stack_traversal"] == traversal
        and record["converged_traversal"] != traversal
        and not record["engine_id"]
    )


def depends_on(traversal):
    """What ``db_records.node_load`` asks: the names the record depends on."""

    def names(record):
        # Only a cached template: parsing one inside the read
        # transaction would hold its connection for long.
        bound = definitions.cached(record["stack_template_id"])
        if bound is None or not runs(record, traversal):
            return None
        defn = bound.resources.get(record["name"])
        return defn.depends if defn is not None else None

    return names


def instant(traversal):
    """What ``db_records.node_load`` asks as ``keep``: whether the node's
    record will most likely be finished at once, by the engine alone (a
    ``side_effect_free`` type, no hook): then its read is continued by
    that write. Only a cached template is looked at."""

    def keep(record):
        bound = definitions.cached(record["stack_template_id"])
        if bound is None or not runs(record, traversal):
            return False
        defn = bound.resources.get(record["name"])
        if defn is None or record["type"] != defn.type:
            return False
        try:
            cls = definitions.plugin_class(
                bound.environment, defn.name, defn.type, bound.files
            )
        except exception.HeatLiteException:
            return False
        return getattr(cls, "side_effect_free", False) and not (
            type_registry.hooks(bound.environment, record["name"])
        )

    return keep


class UpdatePhase:
    """Update nodes.

    :param actions: the ``actions.ActionRunner`` (failing a record).
    :param changes: the ``changes.Changes`` that carry a decision out.
    :param simple: the ``cleanup_phase.SimpleActions`` (RESUME, CHECK).
    :param successors: ``successors.Successors``.
    """

    def __init__(self, actions, changes, simple, successors):
        self.actions: actions_mod.ActionRunner = actions
        self.changes: changes_mod.Changes = changes
        self.simple: cleanup_phase.SimpleActions = simple
        self.successors: successors_mod.Successors = successors

    def run(self, node):
        """Run update ``node``; return the next nodes.

        An instant record's read and finish are one transaction
        (``db_records.node_scope``).
        """
        with db_records.node_scope():
            return self._run(node)

    def _handed(self, node):
        handed = self.successors.handed
        return handed.take(node) if handed is not None else None

    def _run(self, node):
        record, deps = db_records.node_load(
            node.entity,
            node.traversal,
            depends_on(node.traversal),
            keep=instant(node.traversal),
            handed=self._handed(node),
        )
        if record is None or record["stack_traversal"] != node.traversal:
            return []
        if not runs(record, node.traversal):
            return []
        if record["stack_action"] in FORWARD_ONLY:
            return self.simple.run(node, record)
        bound = definitions.get(
            record["stack_template_id"], definitions.stack_info(record)
        )
        defn = bound.resources.get(record["name"])
        if defn is None:
            return []
        if deps is None:
            deps = db_records.resources_converged(
                record["stack_id"], defn.depends, node.traversal
            )
        if len(deps) != len(defn.depends):
            return []  # not ready: a duplicate or early message
        values = {
            "template_id": record["stack_template_id"],
            "converged_traversal": node.traversal,
            "type": defn.type,
            "requires": json.dumps(sorted(d["id"] for d in deps.values())),
        }
        try:
            cls = definitions.plugin_class(
                bound.environment, defn.name, defn.type, bound.files
            )
            services = self.actions.services
            scope = definitions.RecordScope(bound, deps, services)
            # Custom constraints ask the cloud through the stack's trust.
            with cloud.side().acting_as(
                services, stack=definitions.stack_of(record)
            ):
                props = _checked_properties(cls, defn, scope)
        except exception.HeatLiteException as exc:
            action = (
                Action.CREATE
                if record["action"] == Action.INIT
                else Action.UPDATE
            )
            return self.actions.fail_before_start(node, record, action, exc)
        values["properties_data"] = json.dumps(props)
        # Every finish of this node ends an update that was cut short.
        values["properties_before"] = None
        policy = defn.update_policy or {}
        change = self.changes
        if (
            record["action"] == Action.INIT
            and record["stack_action"] == Action.ADOPT
        ):
            return change.adopt(node, record, cls, props, values, policy)
        if record["action"] == Action.INIT:
            if self.actions.held(node, record, "pre-create", Action.CREATE):
                return []
            return change.create(
                node,
                record,
                cls,
                props,
                values,
                policy,
                external_id=defn.external_id,
            )
        if (
            actions.interrupted_create(record)
            and defn.external_id is None
            and cls.find_created is not base.Resource.find_created
        ):
            return change.resume_create(
                node, record, cls, props, values, policy
            )
        return self._decide(node, record, cls, props, values, bound, defn)

    def _decide(self, node, record, cls, props, values, bound, defn):
        """Update an existing record in place, replace it, or leave it."""
        policy = defn.update_policy or {}
        restricted = type_registry.restricted_actions(
            bound.environment, defn.name
        )
        old_props, diff = _changes(record, props)
        plugin = self.actions.plugin(cls, record, old_props)
        plugin.update_policy = policy
        failed = record["status"] == Status.FAILED
        external = plugin.data().get(actions.EXTERNAL_ID)
        if external != defn.external_id:
            # Set, changed or removed alike (as Heat): a resource cannot
            # become, or stop being, someone else's.
            return self.actions.fail_before_start(
                node,
                record,
                Action.UPDATE,
                exception.NotSupported(
                    feature="Update to property external_id of %s"
                    % record["name"]
                ),
            )
        replace = (
            not definitions.keeps_kind(record, defn.type, cls)
            or record["action"] == Action.DELETE
            or (failed and plugin.needs_replace_failed(record["action"]))
            or (diff and plugin.needs_replace(props, diff))
        )
        if (
            not replace
            and not diff
            and not getattr(plugin, "always_update", False)
        ):
            # A pre-update hook stops an unchanged resource too (Heat
            # breaks before it decides whether anything changed).
            if self.actions.held(node, record, "pre-update", Action.UPDATE):
                return []
            if failed:
                values.update(
                    status=Status.COMPLETE,
                    status_reason=(
                        "Update status to COMPLETE for FAILED resource "
                        "neither update nor replace."
                    ),
                )
            return self.successors.finish_unlocked(node, record, values)
        kind = "replace" if replace else "update"
        if kind in restricted:
            return self.changes.restricted(node, record, kind)
        immutable = plugin.immutable_changes(diff)
        if immutable:
            return self.actions.fail_before_start(
                node,
                record,
                Action.UPDATE,
                exception.NotSupported(
                    feature="Update to property %s of "
                    "%s (%s)"
                    % (", ".join(immutable), record["name"], record["type"])
                ),
            )
        if self.actions.held(node, record, "pre-update", Action.UPDATE):
            return []
        if replace:
            return self.changes.replace(
                node, record, cls, props, values, policy=policy
            )
        plugin.restricted = restricted
        return self.changes.update_in_place(
            node, record, plugin, props, diff, values
        )


def _changes(record, props):
    """(the properties the resource is taken to have, the names that may
    differ from ``props``).

    Normally the stored properties and what differs from them. After an
    in-place update that was cut short (``properties_before`` kept by the
    takeover) the resource may lie anywhere between the properties before
    it and those it tried: every name that differs from either is
    changed again, from the side that differs from the goal (the one it
    started from when the same goal is re-driven, the one it tried when a
    rollback goes back).
    """
    stored = json.loads(record["properties_data"] or "{}")
    diff = _differ(props, stored)
    if record.get("properties_before") is None:
        return stored, diff
    before = json.loads(record["properties_before"])
    return (before if not diff else stored), diff | _differ(props, before)


def _differ(a, b):
    return {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
