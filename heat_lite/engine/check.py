"""Run one graph node: make a record match the goal, or delete it.

``NodeRunner.run`` is what a worker does for a ``check_resource`` message.
It returns the nodes that became ready because of it (the caller runs one
of them itself and casts the rest). Every step is idempotent: a node that
is stale (older traversal), done, or locked by someone else does nothing;
the holder of a lock re-triggers the record into the newest traversal when
it lets go.
"""

import dataclasses
import json
import logging
import threading
import uuid
from typing import Any

from heat_lite.common import exception
from heat_lite.db import api as db_api
from heat_lite.db import convergence as conv
from heat_lite.db import models
from heat_lite.engine import definitions, hooks
from heat_lite.engine.planner import BARRIER, CLEANUP, STACK, UPDATE
from heat_lite.engine.template import registry as type_registry
from heat_lite.resources import base

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Job:
    """One resource action in flight (possibly polled over time)."""

    record: dict
    node: int
    phase: str
    traversal: str
    action: str
    plugin: Any
    cookie: Any = None
    check: Any = None
    started: Any = None
    progress_written: bool = False
    post_hook_done: bool = False
    values: dict = dataclasses.field(default_factory=dict)


class NodeRunner:
    """Executes nodes for one engine process (``engine_id``)."""

    def __init__(self, engine_id, stacks, graphs, scheduler):
        self.engine_id = engine_id
        self.stacks = stacks
        self.graphs = graphs
        self.scheduler = scheduler
        # Records this process holds a lock on because an action runs.
        self._active = set()
        self._active_lock = threading.Lock()

    def active_records(self):
        """Ids of records whose lock an action of this process holds."""
        with self._active_lock:
            return set(self._active)

    # Entry point ---------------------------------------------------------
    def run(self, stack_id, traversal, entity, phase):
        """Run node (entity, phase) of ``traversal``; return next nodes."""
        if entity == 0:
            if phase == BARRIER:
                return self.stacks.begin_cleanup(stack_id, traversal)
            if phase == STACK:
                self.stacks.mark_complete(stack_id, traversal)
            return []
        record = conv.resource_load(entity)
        if record is None or record["stack_traversal"] != traversal:
            return []
        if phase == UPDATE:
            return self._update(record, traversal, entity)
        return self._cleanup(record, traversal, entity)

    # Update phase --------------------------------------------------------
    def _update(self, record, traversal, node):
        while record["replaced_by"]:
            record = conv.resource_load(record["replaced_by"])
            if record is None:
                return []
        if (record["converged_traversal"] == traversal
                or record["engine_id"]):
            return []
        if record["stack_action"] in ("RESUME", "CHECK"):
            return self._simple_action(record, node, traversal, UPDATE)
        bound = definitions.get(record["stack_template_id"],
                                definitions.stack_info(record))
        defn = bound.resources.get(record["name"])
        if defn is None:
            return []
        deps = conv.resources_converged(record["stack_id"], defn.depends,
                                        traversal)
        if len(deps) != len(defn.depends):
            return []  # not ready: a duplicate or early message
        values = {"template_id": record["stack_template_id"],
                  "converged_traversal": traversal, "type": defn.type,
                  "requires": json.dumps(sorted(d["id"]
                                                for d in deps.values()))}
        try:
            cls = definitions.plugin_class(bound.environment, defn.name,
                                           defn.type, bound.files)
            scope = definitions.RecordScope(bound, deps)
            props = cls.validate_properties(
                defn.resolve_properties(scope),
                "resources.%s.properties" % defn.name)
        except exception.HeatLiteException as exc:
            action = "CREATE" if record["action"] == "INIT" else "UPDATE"
            return self._fail_before_start(record, node, traversal, action,
                                           exc)
        values["properties_data"] = json.dumps(props)
        policy = defn.update_policy or {}
        if record["action"] == "INIT":
            if self._held(record, traversal, node, UPDATE, "pre-create",
                          "CREATE"):
                return []
            return self._create(record, node, traversal, cls, props, values,
                                policy, external_id=defn.external_id)
        return self._decide(record, node, traversal, cls, props, values,
                            bound, defn)

    def _decide(self, record, node, traversal, cls, props, values, bound,
                defn):
        """Update an existing record in place, replace it, or leave it."""
        policy = defn.update_policy or {}
        restricted = type_registry.restricted_actions(bound.environment,
                                                      defn.name)
        old_props = json.loads(record["properties_data"] or "{}")
        plugin = self._plugin(cls, record, old_props)
        plugin.update_policy = policy
        failed = record["status"] == "FAILED"
        external = plugin.data().get(EXTERNAL_ID)
        if external is not None and external != defn.external_id:
            return self._fail_before_start(
                record, node, traversal, "UPDATE", exception.NotSupported(
                    feature="Update to property external_id of %s" %
                    record["name"]))
        diff = {k for k in set(props) | set(old_props)
                if props.get(k) != old_props.get(k)}
        replace = (record["type"] != defn.type
                   or record["action"] == "DELETE"
                   or (failed and plugin.needs_replace_failed(
                       record["action"]))
                   or (diff and plugin.needs_replace(props, diff)))
        if not replace and not diff and not getattr(plugin, "always_update",
                                                    False):
            if failed:
                values.update(status="COMPLETE", status_reason=(
                    "Update status to COMPLETE for FAILED resource neither "
                    "update nor replace."))
            return self._finish_unchanged(record, node, traversal, values)
        kind = "replace" if replace else "update"
        if kind in restricted:
            return self._restricted(record, traversal, kind)
        immutable = plugin.immutable_changes(diff)
        if immutable:
            return self._fail_before_start(
                record, node, traversal, "UPDATE",
                exception.NotSupported(feature="Update to property %s of "
                                       "%s (%s)" % (", ".join(immutable),
                                                    record["name"],
                                                    record["type"])))
        if self._held(record, traversal, node, UPDATE, "pre-update",
                      "UPDATE"):
            return []
        if replace:
            return self._replace(record, node, traversal, cls, props,
                                 values, locked=False, policy=policy)
        plugin.restricted = restricted
        return self._update_in_place(record, node, traversal, plugin, props,
                                     diff, values)

    def _restricted(self, record, traversal, kind):
        """An update the environment forbids: the resource stays as it
        was, an UPDATE_FAILED event says why, and the stack fails."""
        reason = "%s is restricted for resource." % kind
        db_api.event_create(db_api.event_values(
            record["stack_id"], record["name"],
            record["physical_resource_id"], "UPDATE", "FAILED", reason,
            record["type"]))
        return self.stacks.resource_failed(
            record["stack_id"], traversal, record["id"],
            "Resource UPDATE failed: resources.%s: %s" % (record["name"],
                                                          reason))

    def _create(self, record, node, traversal, cls, props, values,
                policy=None, external_id=None):
        """Create the record's resource, or adopt ``external_id``: an
        existing physical resource that is never created nor deleted."""
        if not self._lock(record, traversal, "CREATE", {
                "type": values["type"],
                "properties_data": values["properties_data"]}):
            return []
        plugin = self._plugin(cls, record, props)
        plugin.update_policy = policy or {}
        job = Job(record, node, UPDATE, traversal, "CREATE", plugin,
                  started=models.utcnow(), values=values,
                  check=getattr(plugin, "check_create_complete", None))
        if external_id is not None:
            job.check = None
            return self._start(job, lambda: _adopt(plugin, external_id))
        return self._start(job, plugin.handle_create)

    def _update_in_place(self, record, node, traversal, plugin, props, diff,
                         values):
        # The new properties are stored as the action starts: should it
        # fail half-way, the next update compares against what was tried.
        if not self._lock(record, traversal, "UPDATE", {
                "properties_data": values["properties_data"]}):
            return []
        record = dict(record, atomic_key=record["atomic_key"] + 1)
        job = Job(record, node, UPDATE, traversal, "UPDATE", plugin,
                  started=models.utcnow(), values=values,
                  check=getattr(plugin, "check_update_complete", None))
        handle = getattr(plugin, "handle_update", None)

        def replace():
            if "replace" in getattr(plugin, "restricted", ()):
                conv.resource_release(record["id"], self.engine_id, {
                    "action": record["action"], "status": record["status"],
                    "properties_data": record["properties_data"]})
                self._unlocked(record["id"])
                return self._restricted(record, traversal, "replace")
            return self._replace(record, node, traversal, type(plugin), props,
                                 values, locked=True,
                                 policy=plugin.update_policy)

        return self._start(job, (lambda: handle(props, diff)) if handle
                           else (lambda: None), on_replace=replace)

    def _replace(self, record, node, traversal, cls, props, values, locked,
                 policy=None):
        restore = ({"action": record["action"], "status": record["status"],
                    "status_reason": record["status_reason"],
                    "properties_data": record["properties_data"]}
                   if locked else None)
        new = conv.resource_replace(
            record["stack_id"], traversal, record,
            self.engine_id if locked else None,
            {"uuid": _uuid(), "stack_id": record["stack_id"],
             "name": record["name"], "role": "current",
             "type": values["type"], "action": "INIT",
             "status": "COMPLETE", "status_reason": "",
             "template_id": values["template_id"], "atomic_key": 0},
            old_values=restore)
        if locked:
            self._unlocked(record["id"])
        if new is None:
            if locked:
                conv.resource_release(record["id"], self.engine_id, restore)
            return self.retrigger(record["id"])
        new = dict(new, stack_traversal=traversal,
                   stack_template_id=record["stack_template_id"],
                   stack_name=record["stack_name"],
                   stack_tenant=record["stack_tenant"],
                   stack_action=record["stack_action"])
        return self._create(new, node, traversal, cls, props, values, policy)

    def _finish_unchanged(self, record, node, traversal, values):
        try:
            fired, superseded = conv.resource_finish(
                record["id"], record["atomic_key"], None, values, [],
                traversal, UPDATE, self.graphs.successors(traversal, node,
                                                          UPDATE))
        except exception.ConcurrentTransaction:
            return self.retrigger(record["id"])
        return self._next(record, traversal, fired, superseded)

    # Cleanup phase -------------------------------------------------------
    def _cleanup(self, record, traversal, node):
        """Delete a record that is not part of the goal.

        ``converged_traversal`` marks the traversal whose cleanup node
        finished; a record some older traversal already deleted still has
        to report to this traversal's successors, exactly once.
        """
        if record["converged_traversal"] == traversal or record["engine_id"]:
            return []
        if record["stack_action"] == "SUSPEND":
            return self._simple_action(record, node, traversal, CLEANUP)
        values = {"action": "DELETE", "status": "COMPLETE",
                  "status_reason": "state changed",
                  "converged_traversal": traversal}
        deleted = record["action"] == "DELETE" and \
            record["status"] == "COMPLETE"
        never_made = record["action"] == "INIT" and \
            not record["physical_resource_id"]
        if deleted or never_made:
            try:
                fired, superseded = conv.resource_finish(
                    record["id"], record["atomic_key"], None,
                    {"converged_traversal": traversal} if deleted
                    else values, [], traversal, CLEANUP,
                    self.graphs.successors(traversal, node, CLEANUP))
            except exception.ConcurrentTransaction:
                return self.retrigger(record["id"])
            return self._next(record, traversal, fired, superseded)
        if self._held(record, traversal, node, CLEANUP, "pre-delete",
                      "DELETE"):
            return []
        if not self._lock(record, traversal, "DELETE"):
            return []
        plugin = definitions.plugin_for(record)
        job = Job(record, node, CLEANUP, traversal, "DELETE", plugin,
                  started=models.utcnow(), values=values,
                  check=getattr(plugin, "check_delete_complete", None))
        if self._keep_physical(record, plugin):
            job.check = None
            return self._start(job, lambda: None)
        return self._start(job, getattr(plugin, "handle_delete",
                                        lambda: None))

    @staticmethod
    def _keep_physical(record, plugin):
        """True for ``deletion_policy: Retain`` and adopted (external_id)
        resources: the record goes, the physical resource stays."""
        if plugin.data().get(EXTERNAL_ID) is not None:
            return True
        try:
            bound = definitions.get(record["template_id"],
                                    definitions.stack_info(record))
        except exception.HeatLiteException:
            return False
        defn = bound.resources.get(record["name"])
        policy = (defn.deletion_policy or "") if defn else ""
        return str(policy).lower() == "retain"

    # Suspend, resume, check ----------------------------------------------
    def _simple_action(self, record, node, traversal, phase):
        """Run the stack's action (SUSPEND in reverse order, RESUME and
        CHECK forwards) on a record, keeping its template and properties.
        A record that was never created only reports to its successors."""
        action = record["stack_action"]
        if record["action"] == "INIT" or record["action"] == "DELETE":
            try:
                fired, superseded = conv.resource_finish(
                    record["id"], record["atomic_key"], None,
                    {"converged_traversal": traversal}, [], traversal,
                    phase, self.graphs.successors(traversal, node, phase))
            except exception.ConcurrentTransaction:
                return self.retrigger(record["id"])
            return self._next(record, traversal, fired, superseded)
        if not self._lock(record, traversal, action):
            return []
        plugin = definitions.plugin_for(record)
        name = action.lower()
        job = Job(record, node, phase, traversal, action, plugin,
                  started=models.utcnow(),
                  values={"converged_traversal": traversal},
                  check=getattr(plugin, "check_%s_complete" % name, None))
        return self._start(job, getattr(plugin, "handle_" + name,
                                        lambda: None))

    # Running and polling actions -----------------------------------------
    def _start(self, job, handle, on_replace=None):
        """Run the plugin's handler, then poll it to completion.

        :param on_replace: what to do if the handler raises UpdateReplace.
        """
        record_id = job.record["id"]
        job.plugin.on_resource_id = lambda physical_id: \
            conv.resource_progress(record_id, self.engine_id, {
                "physical_resource_id": physical_id})
        try:
            job.cookie = handle()
        except base.UpdateReplace:
            if on_replace is None:
                raise
            return on_replace()
        except Exception as exc:  # noqa: BLE001 - plugin failures
            return self._job_failed(job, exc)
        return self._poll(job)

    def _poll(self, job):
        delay = job.plugin.default_poll_interval
        try:
            done = job.check(job.cookie) if job.check else True
        except base.PollDelay as wait:
            done, delay = False, wait.seconds
        except Exception as exc:  # noqa: BLE001 - plugin failures
            return self._job_failed(job, exc)
        if done:
            try:
                return self._job_done(job)
            except Exception as exc:  # noqa: BLE001 - never keep the lock
                LOG.exception("Finishing %s of resource %s failed",
                              job.action, job.record["id"])
                return self._job_failed(job, exc)
        if self._abandoned(job):
            return self._job_failed(job, exception.ActionAborted(
                action=job.action))
        self._write_progress(job)
        self.scheduler.later(delay, lambda: self._poll(job))
        return []

    @staticmethod
    def _abandoned(job):
        """True when nobody waits for this action any more: the stack is
        being deleted by a newer traversal, or its traversal failed, was
        cancelled or timed out. (A newer update lets it finish.)"""
        state = db_api.stack_state(job.record["stack_id"])
        if state is None:
            return True
        traversal, action, status = state
        if traversal == job.traversal:
            return False
        return (action == "DELETE" and job.action != "DELETE") or \
            status == "FAILED"

    def _write_progress(self, job):
        plugin = job.plugin
        if job.progress_written and not (plugin.resource_id_changed
                                         or plugin.data_changed):
            return
        events = [] if job.progress_written else [
            self._event(job, "IN_PROGRESS", "state changed", job.started)]
        conv.resource_progress(job.record["id"], self.engine_id, {
            "physical_resource_id": plugin.resource_id,
            "rsrc_data": json.dumps(plugin.data())}, events)
        plugin.resource_id_changed = plugin.data_changed = False
        job.progress_written = True

    def _held(self, record, traversal, node, phase, hook, action):
        """Wait at a ``pre-*`` hook: re-run the node until it is cleared.
        """
        if hook not in hooks.configured(record) or not hooks.hold(
                record, traversal, hook, action,
                (record["action"], record["status"])):
            return False
        self.scheduler.later(hooks.POLL_SECONDS, lambda: self.run(
            record["stack_id"], traversal, node, phase))
        return True

    def _job_done(self, job):
        """The action finished; wait at a ``post-*`` hook, then finish."""
        hook = "post-" + job.action.lower()
        if hook in hooks.configured(job.record) and not job.post_hook_done:
            record = conv.resource_load(job.record["id"])
            if record is not None and hooks.hold(
                    record, job.traversal, hook, job.action,
                    (job.action, "COMPLETE")):
                self._write_progress(job)
                return self._after_post_hook(job, hook)
        return self._finish_job(job)

    def _after_post_hook(self, job, hook):
        if hooks.cleared(job.record["id"], hook, job.traversal) or \
                self._abandoned(job):
            job.post_hook_done = True
            return self._finish_job(job)
        self.scheduler.later(hooks.POLL_SECONDS,
                             lambda: self._after_post_hook(job, hook))
        return []

    def _finish_job(self, job):
        plugin = job.plugin
        values = dict(job.values, action=job.action, status="COMPLETE",
                      status_reason="state changed",
                      physical_resource_id=plugin.resource_id,
                      rsrc_data=json.dumps(plugin.data()))
        if job.phase == UPDATE:
            values["attr_data"] = json.dumps(self._attributes(plugin))
            values["role"] = "current"
        events = [] if job.progress_written else [
            self._event(job, "IN_PROGRESS", "state changed", job.started)]
        events.append(self._event(job, "COMPLETE", "state changed"))
        try:
            fired, superseded = conv.resource_finish(
                job.record["id"], None, self.engine_id, values, events,
                job.traversal, job.phase, self.graphs.successors(
                    job.traversal, job.node, job.phase))
        except exception.ConcurrentTransaction:
            LOG.warning("Lost the lock of resource %s", job.record["id"])
            self._unlocked(job.record["id"])
            return []
        self._unlocked(job.record["id"])
        return self._next(job.record, job.traversal, fired, superseded)

    def _job_failed(self, job, exc):
        reason = "%s: resources.%s: %s" % (type(exc).__name__,
                                           job.record["name"], exc)
        if not isinstance(exc, exception.HeatLiteException):
            LOG.info("Resource %s %s failed: %s", job.record["name"],
                     job.action, reason)
        events = [] if job.progress_written else [
            self._event(job, "IN_PROGRESS", "state changed", job.started)]
        events.append(self._event(job, "FAILED", reason))
        conv.resource_release(job.record["id"], self.engine_id, {
            "action": job.action, "status": "FAILED",
            "status_reason": reason,
            "physical_resource_id": job.plugin.resource_id,
            "rsrc_data": json.dumps(job.plugin.data())}, events)
        self._unlocked(job.record["id"])
        return self.stacks.resource_failed(
            job.record["stack_id"], job.traversal, job.record["id"],
            "Resource %s failed: %s" % (job.action, reason))

    def _fail_before_start(self, record, node, traversal, action, exc):
        if not self._lock(record, traversal, action):
            return []
        plugin = definitions.plugin_for(record)
        job = Job(dict(record), node, UPDATE, traversal, action, plugin,
                  started=models.utcnow())
        return self._job_failed(job, exc)

    # Helpers -------------------------------------------------------------
    def _lock(self, record, traversal, action, extra=None):
        with self._active_lock:
            self._active.add(record["id"])
        locked = conv.resource_lock(
            record["id"], record["atomic_key"], self.engine_id, traversal,
            dict({"action": action, "status": "IN_PROGRESS",
                  "status_reason": "state changed"}, **(extra or {})))
        if not locked:
            self._unlocked(record["id"])
        return locked

    def _unlocked(self, record_id):
        with self._active_lock:
            self._active.discard(record_id)

    def _next(self, record, traversal, fired, superseded):
        if superseded:
            return self.retrigger(record["id"])
        return [(record["stack_id"], traversal, e, p) for e, p in fired]

    def retrigger(self, record_id):
        """Offer a record that was busy to the stack's newest traversal.

        :returns: its node in that traversal if the node is ready.
        """
        record = conv.resource_load(record_id)
        if record is None or not record["stack_traversal"]:
            return []
        traversal = record["stack_traversal"]
        node = self.graphs.node_of(traversal, record)
        if node is None:
            return []
        entity, phase = node
        if conv.sync_point_remaining(traversal, entity, phase) == 0:
            return [(record["stack_id"], traversal, entity, phase)]
        return []

    @staticmethod
    def _plugin(cls, record, props):
        """A plugin of class ``cls`` for ``record``, acting for the stack's
        goal template."""
        plugin = definitions.plugin_for(record, props)
        if type(plugin) is not cls:
            plugin = cls(plugin.name, plugin.type_name, props,
                         plugin.resource_id, plugin.data(), plugin.stack)
        plugin.stack["template_id"] = record["stack_template_id"]
        return plugin

    @staticmethod
    def _attributes(plugin):
        """Attribute values cached for get_attr and outputs (``show`` is
        left out: it may be large and is resolved on demand)."""
        return {name: plugin.get_attribute(name)
                for name in plugin.attributes() if name != "show"}

    def _event(self, job, status, reason, when=None):
        return db_api.event_values(
            job.record["stack_id"], job.record["name"],
            job.plugin.resource_id, job.action, status, reason,
            job.record["type"], when=when)


def _uuid():
    return str(uuid.uuid4())


EXTERNAL_ID = "external_id"


def _adopt(plugin, external_id):
    """Take an existing physical resource instead of creating one."""
    plugin.data_set(EXTERNAL_ID, external_id)
    plugin.resource_id_set(external_id)
