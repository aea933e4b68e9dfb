"""The traversal calls of the ``[engine] topic``: a stack's traversal
history and queue (``db.traversal_log``), the cancel of a queued update
and the stack's update semantics (``engine.traversal.queue``)."""

from heat_lite.common import exception
from heat_lite.common.states import CONVERGE, QUEUE
from heat_lite.db import traversal_log as db_log
from heat_lite.engine.endpoint import goals
from heat_lite.engine.endpoint.base import TARGET, expected, find_stack


def _when(value):
    return value.isoformat() if value is not None else None


def view(row):
    """A traversal as the API shows it."""
    return {
        "id": row["id"],
        "action": row["action"],
        "state": row["state"],
        "status_reason": row["status_reason"],
        "requested_by": row["requested_by"],
        "superseded_by": row["superseded_by"],
        "created_at": _when(row["created_at"]),
        "started_at": _when(row["started_at"]),
        "finished_at": _when(row["finished_at"]),
    }


def set_semantics(stack, semantics):
    """Store ``stack``'s update semantics (None: converge); leaving
    ``queue`` cancels the updates still queued.

    :returns: ``semantics``.
    :raises StackNotFound: if the stack was deleted meanwhile.
    """
    cancel = None
    if stack.get("update_semantics") == QUEUE and semantics != QUEUE:
        cancel = "Update semantics changed to %s" % (semantics or "converge")
    if not db_log.stack_set_semantics(stack["id"], semantics, cancel):
        raise exception.StackNotFound(name=stack["name"])
    return semantics


class TraversalEndpoint:
    """``list_traversals``, ``cancel_traversal``, ``set_update_semantics``."""

    target = TARGET

    @expected
    def list_traversals(self, ctxt, stack_identity):
        """The stack's running, queued and recent traversals, newest
        first.

        :raises StackNotFound: (404; another project's stack too).
        """
        stack = find_stack(ctxt, stack_identity)
        return [view(row) for row in db_log.log_list(stack["id"])]

    @expected
    def cancel_traversal(self, ctxt, stack_identity, traversal_id):
        """Cancel a queued update of the stack.

        :raises StackNotFound, TraversalNotFound: (404).
        :raises TraversalNotQueued: (409) it is not (any more) QUEUED.
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        reason = "Cancelled by %s" % (ctxt.user_name or ctxt.user_id)
        if not db_log.queue_cancel(stack["id"], traversal_id, reason):
            row = db_log.log_get(stack["id"], traversal_id)
            raise exception.TraversalNotQueued(
                traversal=traversal_id,
                stack_name=stack["name"],
                state=row["state"],
            )
        return view(db_log.log_get(stack["id"], traversal_id))

    @expected
    def set_update_semantics(self, ctxt, stack_identity, semantics):
        """Set the stack's update semantics.

        :raises StackNotFound: (404).
        :raises Invalid: (400) not one of ``states.UPDATE_SEMANTICS``.
        """
        stored = goals.semantics_arg({"update_semantics": semantics})
        stack = find_stack(ctxt, stack_identity, live=True)
        set_semantics(stack, stored)
        return {"update_semantics": stored or CONVERGE}
