"""The cleanup phase: delete (or keep, or suspend) the records that are
not part of the goal, in reverse dependency order. Mixed into
``node.NodeRunner``.
"""

import logging

from heat_lite.common import exception
from heat_lite.db import convergence as conv
from heat_lite.db import models
from heat_lite.engine import definitions
from heat_lite.engine.traversal.planner import CLEANUP
from heat_lite.engine.worker import actions

LOG = logging.getLogger(__name__)


class CleanupPhase:
    """Cleanup nodes and the SUSPEND / RESUME / CHECK walks."""

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
        values = {
            "action": "DELETE",
            "status": "COMPLETE",
            "status_reason": "state changed",
            "converged_traversal": traversal,
        }
        deleted = (
            record["action"] == "DELETE" and record["status"] == "COMPLETE"
        )
        never_made = (
            record["action"] == "INIT" and not record["physical_resource_id"]
        )
        if deleted or never_made:
            try:
                fired, superseded = conv.resource_finish(
                    record["id"],
                    record["atomic_key"],
                    None,
                    {"converged_traversal": traversal} if deleted else values,
                    [],
                    traversal,
                    CLEANUP,
                    self.graphs.successors(traversal, node, CLEANUP),
                )
            except exception.ConcurrentTransaction:
                return self.retrigger(record["id"])
            return self._next(record, traversal, fired, superseded)
        if self._held(
            record, traversal, node, CLEANUP, "pre-delete", "DELETE"
        ):
            return []
        plugin = definitions.plugin_for(record)
        job = actions.Job(
            record,
            node,
            CLEANUP,
            traversal,
            "DELETE",
            plugin,
            started=models.utcnow(),
            values=values,
            check=getattr(plugin, "check_delete_complete", None),
        )
        if not self._keep_physical(record, plugin):
            done = self._instant(
                job, getattr(plugin, "handle_delete", lambda: None)
            )
            if done is not None:
                return done
        if not self._lock(record, traversal, "DELETE"):
            return []
        if self._keep_physical(record, plugin):
            job.check = None
            return self._start(job, lambda: None)
        return self._start(job, getattr(plugin, "handle_delete", lambda: None))

    @staticmethod
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

    # Suspend, resume, check ----------------------------------------------
    def _simple_action(self, record, node, traversal, phase):
        """Run the stack's action (SUSPEND in reverse order, RESUME and
        CHECK forwards) on a record, keeping its template and properties.
        A record that was never created only reports to its successors."""
        action = record["stack_action"]
        if record["action"] == "INIT" or record["action"] == "DELETE":
            try:
                fired, superseded = conv.resource_finish(
                    record["id"],
                    record["atomic_key"],
                    None,
                    {"converged_traversal": traversal},
                    [],
                    traversal,
                    phase,
                    self.graphs.successors(traversal, node, phase),
                )
            except exception.ConcurrentTransaction:
                return self.retrigger(record["id"])
            return self._next(record, traversal, fired, superseded)
        if not self._lock(record, traversal, action):
            return []
        plugin = definitions.plugin_for(record)
        name = action.lower()
        job = actions.Job(
            record,
            node,
            phase,
            traversal,
            action,
            plugin,
            started=models.utcnow(),
            values={"converged_traversal": traversal},
            check=getattr(plugin, "check_%s_complete" % name, None),
        )
        return self._start(
            job, getattr(plugin, "handle_" + name, lambda: None)
        )
