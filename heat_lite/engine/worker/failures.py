"""Failing a node visibly when something unexpected escapes running it.

A plugin's handler or completion check that raises is failed by the
action itself (``actions.ActionRunner._job_failed``). Anything else that
escapes a node -- a plugin's ``needs_replace``, its constructor, property
resolution, the engine's own code, a poll or hook callback -- reaches the
dispatcher, which hands it here instead of dropping it: the record is
marked FAILED with the exception's text as its reason and an event, and
the stack fails or rolls back as for any resource failure. Dropping it
would leave the node for the watchdog to re-drive into the same bug
forever.
"""

import logging

from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import cloud
from heat_lite.engine.traversal import ops
from heat_lite.engine.traversal.planner import CLEANUP, FORWARD_ONLY
from heat_lite.engine.worker import lease
from heat_lite.resources import base

LOG = logging.getLogger(__name__)


def reason_for(exc, name):
    """The status reason of a resource that failed with ``exc``."""
    return "%s: resources.%s: %s" % (type(exc).__name__, name, exc)


def expected(exc):
    """True for an outcome rather than a bug: a typed error of heat_lite,
    a resource's stated failure (a wait condition's timeout, a failed
    deployment), an answer of the cloud."""
    return isinstance(
        exc, (exception.HeatLiteException, base.ActionFailed)
    ) or cloud.side().is_cloud_error(exc)


def log_unexpected(exc, what):
    """One traceback per unexpected error, where it is handled; expected
    failures (``expected``) get one line."""
    if expected(exc):
        LOG.info("%s failed: %s", what, exc)
    else:
        LOG.error("%s failed unexpectedly", what, exc_info=exc)


class NodeFailures:
    """Fails nodes for one engine process.

    :param locks: the process's ``lease.LockTable``.
    :param stacks: ``traversal.ops.StackOps`` (the stack fails or rolls
        back).
    """

    def __init__(self, locks, stacks):
        self.locks: lease.LockTable = locks
        self.stacks: ops.StackOps = stacks

    def fail_node(self, stack_id, traversal, entity, phase, exc, logged=False):
        """Fail node (entity, phase) of ``traversal`` because of ``exc``.

        Does nothing if the node is stale (a newer traversal, a record
        gone) or its record is locked by another engine (that engine's
        action decides). ``logged``: the traceback was already logged.

        :returns: the next nodes (a newer traversal's, or a rollback's).
        """
        if isinstance(exc, exception.ConcurrentTransaction):
            # A write refused because someone else changed the record or
            # took its lock over (this engine was claimed): the other
            # side's action decides, and it re-triggers the node.
            LOG.info(
                "Node %s/%s of stack %s lost a race: %s",
                entity,
                phase,
                stack_id,
                exc,
            )
            return []
        if not logged:
            log_unexpected(
                exc, "Node %s/%s of stack %s" % (entity, phase, stack_id)
            )
        if entity == 0:
            return self._fail_stack_node(stack_id, traversal, phase, exc)
        record = db_records.resource_load(entity)
        while (
            phase != CLEANUP and record is not None and record["replaced_by"]
        ):
            record = db_records.resource_load(record["replaced_by"])
        if record is None or record["stack_traversal"] != traversal:
            return []
        action = self._failed_action(record, phase)
        if record["engine_id"] is None:
            lease = self.locks.take(record, traversal, action)
        else:
            lease = self.locks.lease_of(record["id"])
            if (
                lease is not None
                and lease.owner != (record["engine_id"], record["lock_epoch"])
            ) or record["lock_traversal"] != traversal:
                # Another engine's action, or an older action of ours
                # (its lock was taken over): that action decides.
                return []
        if lease is None:
            return []
        reason = reason_for(exc, record["name"])
        event = db_events.event_values(
            stack_id,
            record["name"],
            record["physical_resource_id"],
            action,
            Status.FAILED,
            reason,
            record["type"],
        )
        released = lease.release(
            {
                "action": action,
                "status": Status.FAILED,
                "status_reason": reason,
            },
            [event],
        )
        if not released:
            return []
        return self.stacks.resource_failed(
            stack_id,
            traversal,
            record["id"],
            "Resource %s failed: %s" % (action, reason),
        )

    @staticmethod
    def _failed_action(record, phase):
        """The action a failed node reports, as Heat names it."""
        if phase == CLEANUP:
            return (
                Action.SUSPEND
                if record["stack_action"] == Action.SUSPEND
                else Action.DELETE
            )
        if record["stack_action"] in FORWARD_ONLY:
            return record["stack_action"]
        if (
            record["lock_traversal"] == record["stack_traversal"]
            and record["status"] == Status.IN_PROGRESS
        ):
            return record["action"]
        return (
            Action.CREATE if record["action"] == Action.INIT else Action.UPDATE
        )

    def _fail_stack_node(self, stack_id, traversal, phase, exc):
        """A stack-level node (the barrier or the final join) failed."""
        stack = db_stacks.stack_get(stack_id)
        if (
            stack["current_traversal"] != traversal
            or stack["status"] != Status.IN_PROGRESS
        ):
            return []
        self.stacks.mark_failed(
            stack, "%s: stack %s: %s" % (type(exc).__name__, phase, exc)
        )
        return []
