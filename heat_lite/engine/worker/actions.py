"""Running one resource action: the plugin's handler, non-blocking
polling of ``check_*_complete``, ``post-*`` hooks, and the transaction that
finishes the node (or fails it).

``ActionRunner`` is given the job (the record, its ``Node``, the plugin and
the record's ``lease.Lease``) by the phase that decided what to do
(``update_phase``, ``changes``, ``cleanup_phase``).
"""

import dataclasses
import json
import logging
from typing import Any

from heat_lite.common import exception, notify
from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import image_holds, models
from heat_lite.db import locks as db_locks
from heat_lite.db import records as db_records
from heat_lite.db import session as db_session
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions
from heat_lite.engine.fleet.retention import store as retention_store
from heat_lite.engine.recovery import fencing
from heat_lite.engine.traversal import ops
from heat_lite.engine.traversal.planner import UPDATE
from heat_lite.engine.worker import (
    caller,
    dispatch,
    failures,
    hooks,
    lease,
    stack_states,
)
from heat_lite.engine.worker import successors as successors_mod
from heat_lite.resources import base, transient
from heat_lite.resources import services as plugin_services

LOG = logging.getLogger(__name__)

EXTERNAL_ID = "external_id"
# How long a polled action waits for an unreachable database before it
# tries its step again.
DB_RETRY_SECONDS = 1.0
# The reason a record gets when its engine went down (or stopped) during
# an action and another engine took the lock over: the outcome of that
# action is unknown.
WENT_DOWN = "Engine went down during resource %s"
# The reason a record gets when its own engine lost track of the action
# holding its lock (an orphan the watchdog releases): the outcome is just
# as unknown.
INTERNAL = "Internal error during resource %s"


def _id_waits_for_finish(job):
    """Whether the physical ID a create's handler sets may wait for the
    write that follows the handler (the finish when the create completes
    at its first check, else the progress write before the first wait)
    instead of a transaction of its own.

    Only for a plugin that can tell what an interrupted create made
    (``find_created``): should the engine die between the cloud making
    the resource and that write, the takeover finds the resource by the
    name it was made with (``update_phase`` resumes the create, the
    cleanup asks before it deletes), so nothing leaks.
    """
    return (
        job.action == Action.CREATE
        and type(job.plugin).find_created is not base.Resource.find_created
    )


def interrupted_create(record):
    """True if the record's create was cut short by a takeover: whatever
    it made is found (``find_created``) rather than made again."""
    return (
        record["action"] == Action.CREATE
        and record["status"] == Status.FAILED
        and record["status_reason"]
        in (WENT_DOWN % Action.CREATE, INTERNAL % Action.CREATE)
    )


@dataclasses.dataclass
class Job:
    """One resource action in flight (possibly polled over time)."""

    record: dict
    node: Any  # the node.Node the action runs for
    action: str
    plugin: Any
    cookie: Any = None
    check: Any = None
    started: Any = None
    progress_written: bool = False
    post_hook_done: bool = False
    # False for an instant action run without taking the lock first.
    locked: bool = True
    # The lease.Lease of the record's lock (None until it is taken).
    lease: Any = None
    # The engine's fencing generation when the job's lock was taken; a
    # job of an older one (the engine was claimed, or is stopping) stops.
    generation: int = 0
    # The (engine_id, epoch) the lock was taken as: every write of the job
    # is guarded by it, never by the engine's current epoch.
    owner: Any = None
    # The properties the action makes real when they are not yet the
    # plugin's own: an update in place's new ones (``handle_update`` gets
    # them as an argument). None: the plugin's properties.
    properties: Any = None
    values: dict = dataclasses.field(default_factory=dict)

    @property
    def traversal(self):
        return self.node.traversal

    @property
    def phase(self):
        return self.node.phase


# The actions whose properties a plugin makes real (and so the images
# they name are used).
_USES_IMAGES = (Action.CREATE, Action.UPDATE)


def job_for(record, node, action, plugin, values=None, lease=None):
    """A job of ``action`` that polls the plugin's
    ``check_<action>_complete`` (if it has one), started now."""
    return Job(
        record,
        node,
        action,
        plugin,
        started=models.utcnow(),
        values=values if values is not None else {},
        lease=lease,
        check=getattr(plugin, "check_%s_complete" % action.lower(), None),
    )


class ActionRunner:
    """Runs resource actions for one engine process.

    :param fence: the engine's identity (its fencing generation).
    :param locks: the process's ``lease.LockTable``.
    :param stacks: ``traversal.ops.StackOps`` (a failed resource fails or
        rolls back its stack).
    :param successors: ``successors.Successors`` (what a finished node
        makes ready).
    :param scheduler: the dispatcher: ``later`` runs a poll again.
    :param rerun: runs a node again (a ``pre-*`` hook was cleared).
    :param services: the plugins' services (``resources.services``): the
        worker's plugins are made here (``plugin_for``), with them.
    """

    def __init__(
        self, fence, locks, stacks, successors, scheduler, rerun, services
    ):
        self.fence: fencing.Fence = fence
        self.locks: lease.LockTable = locks
        self.stacks: ops.StackOps = stacks
        self.successors: successors_mod.Successors = successors
        self.scheduler: dispatch.Dispatcher = scheduler
        self.rerun = rerun
        self.services: plugin_services.Services = services
        # The polls' reads of their stacks' states, shared within a tick.
        self.polled_states = stack_states.SharedStates(
            lambda stack_id: db_stacks.stack_state(stack_id)
        )

    # Running and polling actions -----------------------------------------
    def start(self, job, handle, on_replace=None):
        """Run the plugin's handler, then poll it to completion.

        :param on_replace: what to do if the handler raises UpdateReplace.
        """
        record_id = job.record["id"]
        if job.locked:
            if not self.locks.bind(job):
                return []  # dropped: the engine was fenced or stops
            if not self.locks.may_act() or self.locks.stale(job):
                # Fenced, lease run out or stopping since the lock was
                # taken: start nothing; the lock goes to a takeover.
                self.locks.job_unlocked(job)
                return []
        else:
            job.generation = self.fence.generation
        owner = job.owner
        notify.resource_event(job.record, job.action, "start")

        def write_now(physical_id):
            db_records.resource_progress(
                record_id, owner, {"physical_resource_id": physical_id}
            )

        # The plugin's services, bound to this action: other resources'
        # data (a handle's comes with the signals kept in their own rows),
        # the physical ID's write, the caller's token.
        bound = job.plugin.services.for_action(
            job.record["stack_id"],
            None if _id_waits_for_finish(job) else write_now,
        )
        job.plugin.services = bound
        try:
            if job.action in _USES_IMAGES:
                self._use_images(job)
            if job.plugin.needs_caller_token:
                bound.request_context = caller.request_context(
                    job.record, job.traversal
                )
            if getattr(job.plugin, "announces_start", False):
                self._write_progress(job)
            job.cookie = handle()
        except base.UpdateReplace:
            if on_replace is None:
                raise
            return on_replace()
        except Exception as exc:  # noqa: BLE001 - plugin failures
            return self.job_failed(job, exc)
        # A physical ID the handler set and did not store is written by
        # the finish, or by the progress write before the first wait.
        bound.write_physical_id = write_now
        return self._poll(job)

    @staticmethod
    def _use_images(job):
        """Before the cloud is asked to use them: the images the
        properties name are marked in use by this record, so image
        retention keeps them (``db.image_holds``); an image retention
        already retires fails the action here (``ImageRetired``); one
        it hid is shown again first (``retention.store.show_again``). No
        statement for a resource that names no image.

        On an update in place these are the images of the new properties
        (``job.properties``): the plugin still has its old ones, and the
        update is what starts to use an image it names. The use runs
        under the record's lease, before the handler: an image a pass
        decided to delete is either revived here (the pass's conditional
        write then matches nothing) or already DELETING, and the update
        fails with ``ImageRetired`` before the cloud is asked."""
        images = job.plugin.image_references(job.properties)
        if images:
            revived = image_holds.use(
                job.record.get("stack_tenant"),
                images,
                record_id=job.record["id"],
            )
            if revived:
                # Hidden by a retention pass and needed again (a
                # rollback, an update naming it): shown in Glance
                # before the cloud is asked to use it.
                retention_store.show_again(revived, job.plugin.services)

    @staticmethod
    def _images_updated(job):
        """An update in place done: the record names only its new images
        now; those it named before are held for the stack's rollback
        until the stack settles (``image_holds.record_images_now``)."""
        if job.plugin.may_name_images():
            image_holds.record_images_now(
                job.record.get("stack_tenant"),
                job.record["id"],
                job.plugin.image_references(),
                stack_id=job.record["stack_id"],
            )

    def instant(self, job, handle):
        """Run a side-effect-free plugin's action without the lock.

        A plugin that declares ``side_effect_free`` (nothing real is made
        or changed, e.g. OS::Heat::None) may be run speculatively: its
        result is written in the one transaction that finishes the node,
        guarded by the record's ``atomic_key``; if the record changed
        meanwhile, the result is thrown away and the node looked at again.
        This saves the lock transaction on every such node.

        :returns: the next nodes, or None if the action did not complete
            at once (the caller then takes the ordinary locked path).
        """
        if not getattr(
            job.plugin, "side_effect_free", False
        ) or hooks.configured(job.record):
            return None
        job.locked = False
        try:
            job.cookie = handle()
            done = job.check(job.cookie) if job.check else True
        except Exception:  # noqa: BLE001 - the locked path reports it
            done = False
        if not done:
            job.locked = True
            return None
        return self._finish_job(job)

    def _poll(self, job):
        if self.locks.stale(job):
            return []
        delay = job.plugin.default_poll_interval
        try:
            done = job.check(job.cookie) if job.check else True
        except base.PollDelay as wait:
            done, delay = False, wait.seconds
        except Exception as exc:  # noqa: BLE001 - plugin failures
            if db_session.is_unavailable(exc):
                return self._when_db_answers(job, lambda: self._poll(job))
            return self.job_failed(job, exc)
        if self.locks.stale(job):
            return []  # fenced while the plugin was asked
        if done:
            return self._finish_polled(job)
        try:
            stopped = self._abandoned(job, self.polled_states.get)
            if stopped is not None:
                _cancel(job)
                return self.job_failed(job, stopped)
            self._write_progress(job)
        except exception.ConcurrentTransaction as exc:
            return self.locks.lost_lock(job, exc)
        except Exception as exc:
            if not db_session.is_unavailable(exc):
                raise
            return self._when_db_answers(job, lambda: self._poll(job))
        self._later(job, delay, lambda: self._poll(job))
        return []

    def _finish_polled(self, job):
        """The plugin says done: record it (once the database answers,
        and the cloud answers the reads of its attributes: polled again
        later, see ``resources.transient``)."""
        try:
            return self._job_done(job)
        except Exception as exc:  # noqa: BLE001 - never keep the lock
            if db_session.is_unavailable(exc):
                return self._when_db_answers(
                    job, lambda: self._finish_polled(job)
                )
            wait = transient.wait_after(job.plugin, exc)
            if wait is None:
                return self.job_failed(job, exc)
        self._later(job, wait, lambda: self._poll(job))
        return []

    def _when_db_answers(self, job, step):
        """The database is unreachable in the middle of an action: keep
        the action (and its lock, which stays ours) and run ``step`` again
        later, instead of dropping it with the lock held or failing the
        resource for what is not its fault."""
        LOG.warning(
            "Database unavailable during %s of resource %s; trying "
            "again in %ss",
            job.action,
            job.record["id"],
            DB_RETRY_SECONDS,
        )
        self._later(
            job, DB_RETRY_SECONDS, lambda: self._if_still_ours(job, step)
        )
        return []

    def _later(self, job, delay, step):
        """Run ``step`` of ``job`` in ``delay`` seconds; the job's lock
        goes with it (``LockTable.hand_off``)."""
        self.locks.hand_off(job)
        self.scheduler.later(delay, step, job.node)

    def _if_still_ours(self, job, step):
        """Run ``step`` if the job's lock survived the outage: an outage
        long enough for this engine to be declared dead lets another one
        take the record over, and this engine may even hold a newer lock
        of it (for another action) by now."""
        if self.locks.stale(job):
            return []
        try:
            record = db_records.resource_load(job.record["id"])
        except Exception as exc:
            if not db_session.is_unavailable(exc):
                raise
            return self._when_db_answers(job, step)
        owner = job.owner
        held = record is not None and (
            record["engine_id"],
            record.get("lock_epoch"),
            record["lock_traversal"],
            record["action"],
        ) == (owner[0], owner[1], job.traversal, job.action)
        if held:
            return step()
        LOG.warning(
            "Lost the lock of resource %s while the database was unavailable",
            job.record["id"],
        )
        self.locks.job_unlocked(job)
        return []

    @classmethod
    def _abandoned(cls, job, stack_state=None):
        """None while someone waits for this action; else the error that
        stops it: the stack is being deleted by a newer traversal, or its
        traversal failed, was cancelled or timed out. (A newer update lets
        it finish.) ``stack_state``: how the stack's state is read (the
        polls share theirs, see ``stack_states``).

        A shared read only ever lets the action go on: it may have been
        taken before this action's own traversal was stored (a delete's
        first poll, right after the update it overtook failed, saw that
        update FAILED and aborted the delete), so stopping is decided on
        a read of this poll's own."""
        stack_id = job.record["stack_id"]
        if stack_state is not None and not cls._stops(
            job, stack_state(stack_id)
        ):
            return None
        state = db_stacks.stack_state(stack_id)
        if not cls._stops(job, state):
            return None
        return cls._stop_error(job, state)

    @staticmethod
    def _stops(job, state):
        """Whether the stack's (traversal, action, status) ``state`` stops
        this action (None: the stack is gone)."""
        if state is None:
            return True
        traversal, action, status = state
        if traversal == job.traversal:
            return False
        if action == Action.DELETE and job.action != Action.DELETE:
            return True
        return status == Status.FAILED

    @staticmethod
    def _stop_error(job, state):
        """The error for a ``state`` that ``_stops`` this action."""
        if state is None:
            return exception.ActionAborted(action=job.action)
        traversal, action, _status = state
        if action == Action.DELETE and job.action != Action.DELETE:
            return exception.ActionAborted(action=job.action)
        if traversal == ops.successor(job.traversal, ops.CANCELLED_STEP):
            return exception.ActionAborted(action=job.action)
        # The operation failed: its reason names the resource that failed
        # (or says it timed out); read only now, once.
        stack = db_stacks.stack_get(job.record["stack_id"])
        return exception.OperationFailed(
            action=job.action, operation=action, reason=stack["status_reason"]
        )

    def _write_progress(self, job):
        plugin = job.plugin
        if job.progress_written and not (
            plugin.resource_id_changed or plugin.data_changed
        ):
            return
        events = (
            []
            if job.progress_written
            else [
                self._event(
                    job, Status.IN_PROGRESS, "state changed", job.started
                )
            ]
        )
        db_records.resource_progress(
            job.record["id"],
            job.owner,
            {
                "physical_resource_id": plugin.resource_id,
                "rsrc_data": json.dumps(plugin.data()),
            },
            events,
        )
        plugin.resource_id_changed = plugin.data_changed = False
        job.progress_written = True

    # Hooks ---------------------------------------------------------------
    def held(self, node, record, hook, action):
        """Wait at a ``pre-*`` hook: re-run the node until it is cleared."""
        if hook not in hooks.configured(record) or not hooks.hold(
            record,
            node.traversal,
            hook,
            action,
            (record["action"], record["status"]),
        ):
            return False
        self.scheduler.later(
            hooks.POLL_SECONDS, lambda: self.rerun(node), node
        )
        return True

    def _job_done(self, job):
        """The action finished; wait at a ``post-*`` hook, then finish."""
        hook = "post-" + job.action.lower()
        if hook in hooks.configured(job.record) and not job.post_hook_done:
            record = db_records.resource_load(job.record["id"])
            if record is not None and hooks.hold(
                record,
                job.traversal,
                hook,
                job.action,
                (job.action, Status.COMPLETE),
            ):
                self._write_progress(job)
                return self._after_post_hook(job, hook)
        return self._finish_job(job)

    def _after_post_hook(self, job, hook):
        if self.locks.stale(job):
            return []
        if (
            hooks.cleared(job.record["id"], hook, job.traversal)
            or self._abandoned(job) is not None
        ):
            job.post_hook_done = True
            return self._finish_job(job)
        self._later(
            job, hooks.POLL_SECONDS, lambda: self._after_post_hook(job, hook)
        )
        return []

    # Finishing -----------------------------------------------------------
    def _finish_job(self, job):
        plugin = job.plugin
        values = dict(
            job.values,
            action=job.action,
            status=Status.COMPLETE,
            status_reason="state changed",
            physical_resource_id=plugin.resource_id,
            rsrc_data=json.dumps(plugin.data()),
        )
        if job.phase == UPDATE:
            values["attr_data"] = json.dumps(self._attributes(plugin))
            values["role"] = "current"
        events = (
            []
            if job.progress_written
            else [
                self._event(
                    job, Status.IN_PROGRESS, "state changed", job.started
                )
            ]
        )
        events.append(self._event(job, Status.COMPLETE, "state changed"))
        guard = (
            (None, job.owner)
            if job.locked
            else (job.record["atomic_key"], None)
        )
        try:
            fired, superseded = self.successors.finish(
                job.node, job.record["id"], guard[0], guard[1], values, events
            )
        except exception.ConcurrentTransaction as exc:
            if job.locked:
                return self.locks.lost_lock(job, exc)
            # Someone changed the record meanwhile: look again.
            self.locks.job_unlocked(job)
            return [job.node]
        self.locks.job_unlocked(job)
        if job.action == Action.UPDATE:
            self._images_updated(job)
        notify.resource_event(
            job.record, job.action, "end", physical_id=plugin.resource_id
        )
        return self.successors.after(job.record, job.node, fired, superseded)

    def job_failed(self, job, exc):
        """Fail the job's record (once the database answers)."""
        try:
            return self._record_failure(job, exc)
        except Exception as db_exc:
            if not db_session.is_unavailable(db_exc):
                raise
            return self._when_db_answers(
                job, lambda: self.job_failed(job, exc)
            )

    def _record_failure(self, job, exc):
        reason = failures.reason_for(exc, job.record["name"])
        failures.log_unexpected(
            exc, "Resource %s %s" % (job.record["name"], job.action)
        )
        events = (
            []
            if job.progress_written
            else [
                self._event(
                    job, Status.IN_PROGRESS, "state changed", job.started
                )
            ]
        )
        events.append(self._event(job, Status.FAILED, reason))
        if job.locked and not self.locks.bind(job):
            return []  # the lock is no longer this process's
        values = {
            "action": job.action,
            "status": Status.FAILED,
            "status_reason": reason,
            "physical_resource_id": job.plugin.resource_id,
            "rsrc_data": json.dumps(job.plugin.data()),
        }
        if job.action == Action.UPDATE:
            # The plugin reported how its update ended: the next update
            # compares with what was tried (only a takeover keeps
            # ``properties_before``).
            values["properties_before"] = None
        released = db_locks.resource_release(
            job.record["id"], job.owner, values, events
        )
        self.locks.job_unlocked(job)
        if not released:
            # The lock was no longer ours (the action had already been
            # recorded, or the lock was taken over): nothing to fail.
            return []
        notify.resource_event(
            job.record, job.action, "error", reason, job.plugin.resource_id
        )
        return self.stacks.resource_failed(
            job.record["stack_id"],
            job.traversal,
            job.record["id"],
            "Resource %s failed: %s" % (job.action, reason),
        )

    def fail_before_start(self, node, record, action, exc):
        """Fail a record whose action could not even start (its
        properties do not resolve, an update it refuses)."""
        lease = self.locks.take(record, node.traversal, action)
        if lease is None:
            return []
        job = Job(
            dict(record),
            node,
            action,
            self.plugin_for(record),
            started=models.utcnow(),
            lease=lease,
        )
        return self.job_failed(job, exc)

    def plugin_for(self, record, props=None):
        """A plugin for a stored record (``definitions.plugin_for``), made
        with the process's services."""
        return definitions.plugin_for(record, self.services, props)

    def plugin(self, cls, record, props):
        """A plugin of class ``cls`` for ``record``, acting for the stack's
        goal template."""
        plugin = self.plugin_for(record, props)
        if type(plugin) is not cls:
            plugin = cls(
                plugin.name,
                plugin.type_name,
                props,
                plugin.resource_id,
                plugin.data(),
                plugin.stack,
                services=self.services,
            )
        plugin.stack["template_id"] = record["stack_template_id"]
        return plugin

    @staticmethod
    def _attributes(plugin):
        """Attribute values cached for get_attr and outputs (``show`` is
        left out: it may be large and is resolved on demand; so is a
        child's output that does not resolve, whose error is then given
        to what uses it, not to this resource)."""
        values = {}
        for name in plugin.attributes():
            if name == "show":
                continue
            try:
                values[name] = plugin.get_attribute(name)
            except exception.TemplateOutputError:
                continue
        return values

    def _event(self, job, status, reason, when=None):
        return db_events.event_values(
            job.record["stack_id"],
            job.record["name"],
            job.plugin.resource_id,
            job.action,
            status,
            reason,
            job.record["type"],
            when=when,
        )


def _cancel(job):
    """Tell a plugin whose action is stopped half-way (the operation
    timed out or failed elsewhere, or a delete overtook it) through its
    ``handle_<action>_cancel()``, as Heat does: a software deployment
    marks its deployment FAILED. A failure there is logged, not raised:
    the action fails anyway."""
    cancel = getattr(job.plugin, "handle_%s_cancel" % job.action.lower(), None)
    if cancel is None:
        return
    try:
        cancel()
    except Exception:  # noqa: BLE001 - a plugin's failure
        LOG.exception(
            "Cancelling %s of resource %s failed",
            job.action,
            job.record["name"],
        )
