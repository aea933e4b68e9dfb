"""Run one graph node: make a record match the goal, or delete it.

``NodeRunner.run`` is what a worker does for a ``check_resource`` message.
It returns the nodes that became ready because of it (the caller runs one
of them itself and casts the rest). Every step is idempotent: a node that
is stale (older traversal), done, or locked by someone else does nothing;
the holder of a lock re-triggers the record into the newest traversal when
it lets go.
"""

import json
import logging
import threading
import uuid

from heat_lite.common import exception
from heat_lite.db import api as db_api
from heat_lite.db import convergence as conv
from heat_lite.db import models
from heat_lite.engine import definitions
from heat_lite.engine.template import registry as type_registry
from heat_lite.engine.traversal.planner import BARRIER, STACK, UPDATE
from heat_lite.engine.worker import actions, adopt, failures
from heat_lite.engine.worker import cleanup_phase as cleanup
from heat_lite.resources import base

LOG = logging.getLogger(__name__)


class NodeRunner(
    actions.ActionRunner,
    cleanup.CleanupPhase,
    adopt.AdoptAction,
    failures.NodeFailures,
):
    """Executes nodes for one engine process; ``fence`` (see
    ``recovery.fencing``) gives the lock owner and says whether it may act.
    """

    def __init__(self, fence, stacks, graphs, scheduler):
        self.fence = fence
        self.stacks = stacks
        self.graphs = graphs
        self.scheduler = scheduler
        # {record id: (owner, generation)} of the locks this process holds
        # (or is taking) because an action of it runs.
        self._active = {}
        self._active_lock = threading.Lock()
        # Per thread: the locks the node being run took (``_lock``) and
        # did not hand to a scheduled step; see ``run``.
        self._taken = threading.local()

    def active_records(self):
        """Ids of records whose lock an action of this process holds."""
        with self._active_lock:
            return set(self._active)

    def drop_all(self):
        """Forget every action in flight (the engine was fenced or stops):
        their locks are left to the takeover."""
        with self._active_lock:
            self._active.clear()

    # Entry point ---------------------------------------------------------
    def run(self, stack_id, traversal, entity, phase):
        """Run node (entity, phase) of ``traversal``; return next nodes.

        If the database is unavailable at some step after this node took
        a record's lock (a refused connection while the engine lives on),
        the exception unwinds the job that held it: no action runs for
        that lock any more, but as long as ``_active`` claims it, the
        watchdog neither re-drives the (locked) node nor takes the lock
        over, and re-running the node does nothing (the record is
        locked). So such locks are forgotten here, and the watchdog's
        orphan takeover releases and re-drives them.
        """
        outer = getattr(self._taken, "locks", None)
        self._taken.locks = taken = []
        try:
            return self._run(stack_id, traversal, entity, phase)
        except Exception as exc:
            if db_api.is_unavailable(exc):
                self._forget_unwound(taken, exc)
            raise
        finally:
            self._taken.locks = outer

    def _run(self, stack_id, traversal, entity, phase):
        if entity == 0:
            if phase == BARRIER:
                return self.stacks.begin_cleanup(stack_id, traversal)
            if phase == STACK:
                self.stacks.mark_complete(stack_id, traversal)
            return []
        if phase == UPDATE:
            record, deps = conv.node_load(
                entity, traversal, self._depends_on(traversal)
            )
            if record is None or record["stack_traversal"] != traversal:
                return []
            return self._update(record, deps, traversal, entity)
        record = conv.resource_load(entity)
        if record is None or record["stack_traversal"] != traversal:
            return []
        return self._cleanup(record, traversal, entity)

    # Update phase --------------------------------------------------------
    @staticmethod
    def _runs(record, traversal):
        """Whether an update node of ``record`` has anything to do."""
        return (
            record["stack_traversal"] == traversal
            and record["converged_traversal"] != traversal
            and not record["engine_id"]
        )

    def _depends_on(self, traversal):
        """What ``node_load`` asks: the names the record depends on."""

        def names(record):
            # Only a cached template: parsing one inside the read
            # transaction would hold its connection for long.
            bound = definitions.cached(record["stack_template_id"])
            if bound is None or not self._runs(record, traversal):
                return None
            defn = bound.resources.get(record["name"])
            return defn.depends if defn is not None else None

        return names

    def _update(self, record, deps, traversal, node):
        if not self._runs(record, traversal):
            return []
        if record["stack_action"] in ("RESUME", "CHECK"):
            return self._simple_action(record, node, traversal, UPDATE)
        bound = definitions.get(
            record["stack_template_id"], definitions.stack_info(record)
        )
        defn = bound.resources.get(record["name"])
        if defn is None:
            return []
        if deps is None:
            deps = conv.resources_converged(
                record["stack_id"], defn.depends, traversal
            )
        if len(deps) != len(defn.depends):
            return []  # not ready: a duplicate or early message
        values = {
            "template_id": record["stack_template_id"],
            "converged_traversal": traversal,
            "type": defn.type,
            "requires": json.dumps(sorted(d["id"] for d in deps.values())),
        }
        try:
            cls = definitions.plugin_class(
                bound.environment, defn.name, defn.type, bound.files
            )
            scope = definitions.RecordScope(bound, deps)
            props = cls.validate_properties(
                defn.resolve_properties(scope),
                "resources.%s.properties" % defn.name,
            )
        except exception.HeatLiteException as exc:
            action = "CREATE" if record["action"] == "INIT" else "UPDATE"
            return self._fail_before_start(
                record, node, traversal, action, exc
            )
        values["properties_data"] = json.dumps(props)
        policy = defn.update_policy or {}
        if record["action"] == "INIT" and record["stack_action"] == "ADOPT":
            return self._adopt(
                record, node, traversal, cls, props, values, policy
            )
        if record["action"] == "INIT":
            if self._held(
                record, traversal, node, UPDATE, "pre-create", "CREATE"
            ):
                return []
            return self._create(
                record,
                node,
                traversal,
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
            return self._resume_create(
                record, node, traversal, cls, props, values, policy
            )
        return self._decide(
            record, node, traversal, cls, props, values, bound, defn
        )

    def _decide(
        self, record, node, traversal, cls, props, values, bound, defn
    ):
        """Update an existing record in place, replace it, or leave it."""
        policy = defn.update_policy or {}
        restricted = type_registry.restricted_actions(
            bound.environment, defn.name
        )
        old_props = json.loads(record["properties_data"] or "{}")
        plugin = self._plugin(cls, record, old_props)
        plugin.update_policy = policy
        failed = record["status"] == "FAILED"
        external = plugin.data().get(actions.EXTERNAL_ID)
        if external is not None and external != defn.external_id:
            return self._fail_before_start(
                record,
                node,
                traversal,
                "UPDATE",
                exception.NotSupported(
                    feature="Update to property external_id of %s"
                    % record["name"]
                ),
            )
        diff = {
            k
            for k in set(props) | set(old_props)
            if props.get(k) != old_props.get(k)
        }
        replace = (
            not definitions.keeps_kind(record, defn.type, cls)
            or record["action"] == "DELETE"
            or (failed and plugin.needs_replace_failed(record["action"]))
            or (diff and plugin.needs_replace(props, diff))
        )
        if (
            not replace
            and not diff
            and not getattr(plugin, "always_update", False)
        ):
            if failed:
                values.update(
                    status="COMPLETE",
                    status_reason=(
                        "Update status to COMPLETE for FAILED resource "
                        "neither update nor replace."
                    ),
                )
            return self._finish_unchanged(record, node, traversal, values)
        kind = "replace" if replace else "update"
        if kind in restricted:
            return self._restricted(record, traversal, kind)
        immutable = plugin.immutable_changes(diff)
        if immutable:
            return self._fail_before_start(
                record,
                node,
                traversal,
                "UPDATE",
                exception.NotSupported(
                    feature="Update to property %s of "
                    "%s (%s)"
                    % (", ".join(immutable), record["name"], record["type"])
                ),
            )
        if self._held(record, traversal, node, UPDATE, "pre-update", "UPDATE"):
            return []
        if replace:
            return self._replace(
                record,
                node,
                traversal,
                cls,
                props,
                values,
                locked=False,
                policy=policy,
            )
        plugin.restricted = restricted
        return self._update_in_place(
            record, node, traversal, plugin, props, diff, values
        )

    def _restricted(self, record, traversal, kind):
        """An update the environment forbids: the resource stays as it
        was, an UPDATE_FAILED event says why, and the stack fails."""
        reason = "%s is restricted for resource." % kind
        db_api.event_create(
            db_api.event_values(
                record["stack_id"],
                record["name"],
                record["physical_resource_id"],
                "UPDATE",
                "FAILED",
                reason,
                record["type"],
            )
        )
        return self.stacks.resource_failed(
            record["stack_id"],
            traversal,
            record["id"],
            "Resource UPDATE failed: resources.%s: %s"
            % (record["name"], reason),
        )

    def _create(
        self,
        record,
        node,
        traversal,
        cls,
        props,
        values,
        policy=None,
        external_id=None,
    ):
        """Create the record's resource, or adopt ``external_id``: an
        existing physical resource that is never created nor deleted."""
        if external_id is None:
            plugin = self._plugin(cls, record, props)
            plugin.update_policy = policy or {}
            job = actions.Job(
                record,
                node,
                UPDATE,
                traversal,
                "CREATE",
                plugin,
                started=models.utcnow(),
                values=values,
                check=getattr(plugin, "check_create_complete", None),
            )
            done = self._instant(job, plugin.handle_create)
            if done is not None:
                return done
        if not self._lock(
            record,
            traversal,
            "CREATE",
            {
                "type": values["type"],
                "properties_data": values["properties_data"],
            },
        ):
            return []
        plugin = self._plugin(cls, record, props)
        plugin.update_policy = policy or {}
        job = actions.Job(
            record,
            node,
            UPDATE,
            traversal,
            "CREATE",
            plugin,
            started=models.utcnow(),
            values=values,
            check=getattr(plugin, "check_create_complete", None),
        )
        if external_id is not None:
            job.check = None
            return self._start(
                job, lambda: _take_external(plugin, external_id)
            )
        return self._start(job, plugin.handle_create)

    def _resume_create(
        self, record, node, traversal, cls, props, values, policy
    ):
        """A create whose engine went down (the outcome is unknown): under
        the lock, ask the plugin what that create made (``find_created``)
        and wait for it, or create it if it made nothing."""
        if not self._lock(
            record,
            traversal,
            "CREATE",
            {
                "type": values["type"],
                "properties_data": values["properties_data"],
            },
        ):
            return []
        plugin = self._plugin(cls, record, props)
        plugin.update_policy = policy or {}
        job = actions.Job(
            record,
            node,
            UPDATE,
            traversal,
            "CREATE",
            plugin,
            started=models.utcnow(),
            values=values,
            check=getattr(plugin, "check_create_complete", None),
        )

        def find_or_create():
            cookie = plugin.find_created()
            if cookie is None:
                LOG.info(
                    "Resource %s: the interrupted create made nothing;"
                    " creating it",
                    record["name"],
                )
                return plugin.handle_create()
            LOG.info(
                "Resource %s: the interrupted create made %s; resuming",
                record["name"],
                plugin.resource_id,
            )
            return cookie

        return self._start(job, find_or_create)

    def _update_in_place(
        self, record, node, traversal, plugin, props, diff, values
    ):
        handle = getattr(plugin, "handle_update", None)
        job = actions.Job(
            record,
            node,
            UPDATE,
            traversal,
            "UPDATE",
            plugin,
            started=models.utcnow(),
            values=values,
            check=getattr(plugin, "check_update_complete", None),
        )
        done = self._instant(
            job, (lambda: handle(props, diff)) if handle else (lambda: None)
        )
        if done is not None:
            return done
        plugin.properties = json.loads(record["properties_data"] or "{}")
        return self._update_locked(
            record, node, traversal, plugin, props, diff, values
        )

    def _update_locked(
        self, record, node, traversal, plugin, props, diff, values
    ):
        # The new properties are stored as the action starts: should it
        # fail half-way, the next update compares against what was tried.
        if not self._lock(
            record,
            traversal,
            "UPDATE",
            {"properties_data": values["properties_data"]},
        ):
            return []
        record = dict(record, atomic_key=record["atomic_key"] + 1)
        job = actions.Job(
            record,
            node,
            UPDATE,
            traversal,
            "UPDATE",
            plugin,
            started=models.utcnow(),
            values=values,
            check=getattr(plugin, "check_update_complete", None),
        )
        handle = getattr(plugin, "handle_update", None)

        def replace():
            if "replace" in getattr(plugin, "restricted", ()):
                conv.resource_release(
                    record["id"],
                    job.owner,
                    {
                        "action": record["action"],
                        "status": record["status"],
                        "properties_data": record["properties_data"],
                    },
                )
                self._job_unlocked(job)
                return self._restricted(record, traversal, "replace")
            return self._replace(
                record,
                node,
                traversal,
                type(plugin),
                props,
                values,
                locked=True,
                policy=plugin.update_policy,
            )

        return self._start(
            job,
            (lambda: handle(props, diff)) if handle else (lambda: None),
            on_replace=replace,
        )

    def _replace(
        self, record, node, traversal, cls, props, values, locked, policy=None
    ):
        restore = (
            {
                "action": record["action"],
                "status": record["status"],
                "status_reason": record["status_reason"],
                "properties_data": record["properties_data"],
            }
            if locked
            else None
        )
        held = self._lock_of(record["id"]) if locked else None
        if locked and held is None:
            return []  # the lock was dropped: the takeover decides
        new = conv.resource_replace(
            record["stack_id"],
            traversal,
            record,
            held[0] if locked else None,
            {
                "uuid": _uuid(),
                "stack_id": record["stack_id"],
                "name": record["name"],
                "role": "current",
                "type": values["type"],
                "action": "INIT",
                "status": "COMPLETE",
                "status_reason": "",
                "template_id": values["template_id"],
                "atomic_key": 0,
            },
            old_values=restore,
        )
        if locked:
            self._unlocked(record["id"], held)
        if new is None:
            if locked:
                conv.resource_release(record["id"], held[0], restore)
            return self.retrigger(record["id"])
        new = dict(
            new,
            stack_traversal=traversal,
            stack_template_id=record["stack_template_id"],
            stack_name=record["stack_name"],
            stack_tenant=record["stack_tenant"],
            stack_action=record["stack_action"],
        )
        return self._create(new, node, traversal, cls, props, values, policy)

    def _finish_unchanged(self, record, node, traversal, values):
        try:
            fired, superseded = conv.resource_finish(
                record["id"],
                record["atomic_key"],
                None,
                values,
                [],
                traversal,
                UPDATE,
                self.graphs.successors(traversal, node, UPDATE),
            )
        except exception.ConcurrentTransaction:
            return self.retrigger(record["id"])
        return self._next(record, traversal, fired, superseded)

    # Helpers -------------------------------------------------------------
    def _next(self, record, traversal, fired, superseded):
        """What follows a node whose finish was committed: its fired
        successors, or (its traversal was superseded) the record offered
        to the newest traversal. Running the node again cannot redo that
        offer (the node is done), so an unavailable database retries the
        offer itself, later."""
        if superseded:
            try:
                return self.retrigger(record["id"])
            except Exception as exc:
                if not db_api.is_unavailable(exc):
                    raise
                LOG.warning(
                    "Database unavailable while offering resource %s to "
                    "its stack's newest traversal; again in %ss: %s",
                    record["id"],
                    actions.DB_RETRY_SECONDS,
                    exc,
                )
                self.scheduler.later(
                    actions.DB_RETRY_SECONDS,
                    lambda: self.retrigger(record["id"]),
                )
                return []
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


def _uuid():
    return str(uuid.uuid4())


def _take_external(plugin, external_id):
    """Take an existing physical resource instead of creating one."""
    plugin.data_set(actions.EXTERNAL_ID, external_id)
    plugin.resource_id_set(external_id)
