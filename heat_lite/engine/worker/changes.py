"""Carrying out what an update node decided: create (or adopt, or take
an ``external_id``), resume an interrupted create, update in place,
replace. Each takes the record's lease (``lease.LockTable.take``), makes
the job and hands it to ``actions.ActionRunner.start``.
"""

import json
import logging
import uuid

from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import locks as db_locks
from heat_lite.db import records as db_records
from heat_lite.engine.traversal import ops
from heat_lite.engine.worker import actions, adopt, hooks, lease
from heat_lite.engine.worker import actions as actions_mod
from heat_lite.engine.worker import successors as successors_mod

LOG = logging.getLogger(__name__)


class Changes:
    """The changes an update node makes to its record.

    :param actions: the ``actions.ActionRunner``.
    :param locks: the process's ``lease.LockTable``.
    :param stacks: ``traversal.ops.StackOps`` (a restricted update fails
        the stack).
    :param successors: ``successors.Successors``.
    """

    def __init__(self, actions, locks, stacks, successors):
        self.actions: actions_mod.ActionRunner = actions
        self.locks: lease.LockTable = locks
        self.stacks: ops.StackOps = stacks
        self.successors: successors_mod.Successors = successors

    def _locked_job(self, node, record, action, cls, props, values, policy):
        """A job of a create-like action under the record's lease (the
        lock also stores the type and properties it is made with), or
        None if the lock was not taken."""
        lease = self.locks.take(
            record,
            node.traversal,
            action,
            {
                "type": values["type"],
                "properties_data": values["properties_data"],
            },
        )
        if lease is None:
            return None
        plugin = self._plugin(cls, record, props, policy)
        return actions.job_for(record, node, action, plugin, values, lease)

    def _plugin(self, cls, record, props, policy):
        plugin = self.actions.plugin(cls, record, props)
        plugin.update_policy = policy or {}
        return plugin

    def create(
        self, node, record, cls, props, values, policy=None, external_id=None
    ):
        """Create the record's resource, or adopt ``external_id``: an
        existing physical resource that is never created nor deleted."""
        if external_id is None:
            plugin = self._plugin(cls, record, props, policy)
            job = actions.job_for(record, node, Action.CREATE, plugin, values)
            done = self.actions.instant(job, plugin.handle_create)
            if done is not None:
                return done
        job = self._locked_job(
            node, record, Action.CREATE, cls, props, values, policy
        )
        if job is None:
            return []
        plugin = job.plugin
        if external_id is not None:
            job.check = None
            return self.actions.start(
                job, lambda: _take_external(plugin, external_id)
            )
        return self.actions.start(job, plugin.handle_create)

    def resume_create(self, node, record, cls, props, values, policy):
        """A create whose engine went down (the outcome is unknown): under
        the lock, ask the plugin what that create made (``find_created``)
        and wait for it, or create it if it made nothing."""
        job = self._locked_job(
            node, record, Action.CREATE, cls, props, values, policy
        )
        if job is None:
            return []
        plugin = job.plugin

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

        return self.actions.start(job, find_or_create)

    def adopt(self, node, record, cls, props, values, policy=None):
        """The ADOPT action of a new record: the plugin's
        ``handle_adopt`` with its entry of the adopt data."""
        job = self._locked_job(
            node, record, Action.ADOPT, cls, props, values, policy
        )
        if job is None:
            return []
        plugin = job.plugin
        entry = adopt.resource_data(plugin)
        if adopt.NESTED_KEY in plugin.data():
            plugin.data_delete(adopt.NESTED_KEY)
        return self.actions.start(job, lambda: plugin.handle_adopt(entry))

    def update_in_place(self, node, record, plugin, props, diff, values):
        """Update the record's resource, keeping its physical ID."""
        handle = getattr(plugin, "handle_update", None)
        base = plugin.properties
        job = actions.job_for(record, node, Action.UPDATE, plugin, values)
        done = self.actions.instant(
            job, (lambda: handle(props, diff)) if handle else (lambda: None)
        )
        if done is not None:
            return done
        plugin.properties = base
        return self._update_locked(node, record, plugin, props, diff, values)

    def _update_locked(self, node, record, plugin, props, diff, values):
        # The new properties are stored as the action starts: should it
        # fail half-way, the next update compares against what was tried.
        # Those it starts from are kept beside them until it finishes, so
        # that an update cut short by a takeover is made again
        # (``update_phase._changes``).
        lease = self.locks.take(
            record,
            node.traversal,
            Action.UPDATE,
            {
                "properties_data": values["properties_data"],
                "properties_before": json.dumps(plugin.properties),
            },
        )
        if lease is None:
            return []
        record = dict(record, atomic_key=record["atomic_key"] + 1)
        job = actions.job_for(
            record, node, Action.UPDATE, plugin, values, lease
        )
        job.properties = props  # the images the update starts to use
        handle = getattr(plugin, "handle_update", None)

        def replace():
            if "replace" in getattr(plugin, "restricted", ()):
                db_locks.resource_release(
                    record["id"],
                    job.owner,
                    {
                        "action": record["action"],
                        "status": record["status"],
                        "properties_data": record["properties_data"],
                        "properties_before": record.get("properties_before"),
                    },
                )
                self.locks.job_unlocked(job)
                return self.restricted(node, record, "replace")
            return self.replace(
                node,
                record,
                type(plugin),
                props,
                values,
                locked=True,
                policy=plugin.update_policy,
            )

        return self.actions.start(
            job,
            (lambda: handle(props, diff)) if handle else (lambda: None),
            on_replace=replace,
        )

    def replace(
        self, node, record, cls, props, values, locked=False, policy=None
    ):
        """Make a new record version (``current``) and create it; the old
        one becomes ``replaced``.

        :param locked: the record's lease is this process's (a plugin's
            update said UpdateReplace): the old record's state is put
            back as it was before that update.
        """
        restore = (
            {
                "action": record["action"],
                "status": record["status"],
                "status_reason": record["status_reason"],
                "properties_data": record["properties_data"],
                "properties_before": record.get("properties_before"),
            }
            if locked
            else None
        )
        lease = self.locks.lease_of(record["id"]) if locked else None
        if locked and lease is None:
            return []  # the lock was dropped: the takeover decides
        new_values = {
            "uuid": str(uuid.uuid4()),
            "stack_id": record["stack_id"],
            "name": record["name"],
            "role": "current",
            "type": values["type"],
            "action": Action.INIT,
            "status": Status.COMPLETE,
            "status_reason": "",
            "template_id": values["template_id"],
            "atomic_key": 0,
        }
        # The new version is inserted already locked by this process, in
        # the transaction that makes the old record ``replaced`` (one
        # transaction less than a lock of its own), unless its create runs
        # without the lock (``actions.instant``).
        key = None
        if not _instant_create(cls, record):
            if not self.locks.may_act():
                # Fenced or stopping: start nothing; a lock held goes to
                # the takeover, as in ``ActionRunner.start``.
                if locked:
                    lease.forget()
                return []
            key = lease.key if locked else self.locks.fence.snapshot()
            new_values.update(
                action=Action.CREATE,
                status=Status.IN_PROGRESS,
                status_reason="state changed",
                properties_data=values["properties_data"],
            )
        new = db_records.resource_replace(
            record["stack_id"],
            node.traversal,
            record,
            lease.owner if locked else None,
            new_values,
            old_values=restore,
            lock=key and key[0],
        )
        if locked:
            lease.forget()
        if new is None:
            if locked:
                db_locks.resource_release(record["id"], lease.owner, restore)
            return self.successors.retrigger(record["id"])
        new = dict(
            new,
            stack_traversal=node.traversal,
            stack_template_id=record["stack_template_id"],
            stack_name=record["stack_name"],
            stack_tenant=record["stack_tenant"],
            stack_action=record["stack_action"],
        )
        if key is None:
            return self.create(node, new, cls, props, values, policy)
        new_lease = self.locks.hold(new["id"], key)
        plugin = self._plugin(cls, new, props, policy)
        job = actions.job_for(
            new, node, Action.CREATE, plugin, values, new_lease
        )
        return self.actions.start(job, plugin.handle_create)

    def restricted(self, node, record, kind):
        """An update the environment forbids: the resource stays as it
        was, an UPDATE_FAILED event says why, and the stack fails."""
        reason = "%s is restricted for resource." % kind
        db_events.event_create(
            db_events.event_values(
                record["stack_id"],
                record["name"],
                record["physical_resource_id"],
                Action.UPDATE,
                Status.FAILED,
                reason,
                record["type"],
            )
        )
        return self.stacks.resource_failed(
            record["stack_id"],
            node.traversal,
            record["id"],
            "Resource UPDATE failed: resources.%s: %s"
            % (record["name"], reason),
        )


def _instant_create(cls, record):
    """Whether ``Changes.create`` runs the create without the lock."""
    return getattr(cls, "side_effect_free", False) and not hooks.configured(
        record
    )


def _take_external(plugin, external_id):
    """Take an existing physical resource instead of creating one."""
    plugin.data_set(actions.EXTERNAL_ID, external_id)
    plugin.resource_id_set(external_id)
