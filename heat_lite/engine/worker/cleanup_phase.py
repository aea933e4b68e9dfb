"""The cleanup phase: delete (or keep, or suspend) the records that are
not part of the goal, in reverse dependency order; and the SUSPEND,
RESUME and CHECK walks, which keep every record's template and
properties.
"""

import logging

from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import records as db_records
from heat_lite.engine import definitions
from heat_lite.engine.worker import actions, lease, prelock
from heat_lite.engine.worker import actions as actions_mod
from heat_lite.engine.worker import successors as successors_mod

LOG = logging.getLogger(__name__)


class CleanupPhase:
    """Cleanup nodes.

    :param actions: the ``actions.ActionRunner``.
    :param locks: the process's ``lease.LockTable``.
    :param successors: ``successors.Successors``.
    :param simple: the ``SimpleActions`` (SUSPEND runs in this phase).
    """

    def __init__(self, actions, locks, successors, simple, prelocks=None):
        self.actions: actions_mod.ActionRunner = actions
        self.locks: lease.LockTable = locks
        self.successors: successors_mod.Successors = successors
        self.simple: SimpleActions = simple
        # Records read (and locked) ahead for a node.
        self.prelocks: prelock.Prelocks | None = prelocks

    def run(self, node):
        """Delete a record that is not part of the goal.

        ``converged_traversal`` marks the traversal whose cleanup node
        finished; a record some older traversal already deleted still has
        to report to this traversal's successors, exactly once.
        """
        traversal = node.traversal
        held = self.prelocks.claim(node) if self.prelocks else None
        if held is None:
            record = db_records.resource_load(node.entity)
        else:
            record, lease = held
            if lease is not None:
                # Read and locked ahead (``prelock.wants_lock``).
                return self._delete(node, record, lease)
        if record is None or record["stack_traversal"] != traversal:
            return []
        if record["converged_traversal"] == traversal or record["engine_id"]:
            return []
        if record["stack_action"] == Action.SUSPEND:
            return self.simple.run(node, record)
        values = _finished(traversal)
        deleted = (
            record["action"] == Action.DELETE
            and record["status"] == Status.COMPLETE
        )
        never_made = (
            record["action"] == Action.INIT
            and not record["physical_resource_id"]
        )
        if deleted or never_made:
            return self.successors.finish_unlocked(
                node,
                record,
                {"converged_traversal": traversal} if deleted else values,
            )
        if self.actions.held(node, record, "pre-delete", Action.DELETE):
            return []
        plugin = self.actions.plugin_for(record)
        job = actions.job_for(record, node, Action.DELETE, plugin, values)
        if not _keep_physical(record, plugin):
            done = self.actions.instant(job, _delete_handler(record, plugin))
            if done is not None:
                return done
        lease = self.locks.take(record, traversal, Action.DELETE)
        if lease is None:
            return []
        return self._delete(node, record, lease, plugin)

    def _delete(self, node, record, lease, plugin=None):
        """Delete ``record`` under ``lease`` (or keep its physical
        resource, see ``_keep_physical``)."""
        plugin = plugin or self.actions.plugin_for(record)
        job = actions.job_for(
            record,
            node,
            Action.DELETE,
            plugin,
            _finished(node.traversal),
            lease,
        )
        if _keep_physical(record, plugin):
            job.check = None
            return self.actions.start(job, lambda: None)
        return self.actions.start(job, _delete_handler(record, plugin))


def _finished(traversal):
    """The values a finished cleanup node writes."""
    return {
        "action": Action.DELETE,
        "status": Status.COMPLETE,
        "status_reason": "state changed",
        "converged_traversal": traversal,
    }


def _delete_handler(record, plugin):
    handle = getattr(plugin, "handle_delete", lambda: None)
    if (
        actions.interrupted_create(record)
        and not (record["physical_resource_id"])
    ):
        return _found_then(plugin, handle)
    return handle


def _found_then(plugin, handle):
    """Delete what an interrupted create made though it stored no
    physical ID (the engine died before the write that carries it, see
    ``actions._id_waits_for_finish``): ask the plugin first."""

    def run():
        try:
            plugin.find_created()
        except NotImplementedError:
            pass  # it cannot tell: nothing to find
        return handle()

    return run


def _keep_physical(record, plugin):
    """True for ``deletion_policy: Retain`` and adopted (external_id)
    resources: the record goes, the physical resource stays."""
    if plugin.data().get(actions.EXTERNAL_ID) is not None:
        return True
    try:
        bound = definitions.get(
            record["template_id"], definitions.stack_info(record)
        )
    except exception.HeatLiteException:
        return False
    defn = bound.resources.get(record["name"])
    policy = (defn.deletion_policy or "") if defn else ""
    return str(policy).lower() == "retain"


class SimpleActions:
    """The stack's SUSPEND (cleanup phase), RESUME and CHECK (update
    phase) on each record.

    :param actions: the ``actions.ActionRunner``.
    :param locks: the process's ``lease.LockTable``.
    :param successors: ``successors.Successors``.
    """

    def __init__(self, actions, locks, successors):
        self.actions: actions_mod.ActionRunner = actions
        self.locks: lease.LockTable = locks
        self.successors: successors_mod.Successors = successors

    def run(self, node, record):
        """Run the stack's action on ``record``, keeping its template and
        properties. A record that was never created (or is deleted) only
        reports to its successors."""
        action = record["stack_action"]
        if (
            record["action"] == Action.INIT
            or record["action"] == Action.DELETE
        ):
            return self.successors.finish_unlocked(
                node, record, {"converged_traversal": node.traversal}
            )
        lease = self.locks.take(record, node.traversal, action)
        if lease is None:
            return []
        plugin = self.actions.plugin_for(record)
        job = actions.job_for(
            record,
            node,
            action,
            plugin,
            {"converged_traversal": node.traversal},
            lease,
        )
        return self.actions.start(
            job, getattr(plugin, "handle_" + action.lower(), lambda: None)
        )
