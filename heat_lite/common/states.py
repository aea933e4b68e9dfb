"""Stack and resource states, as Heat spells them, and the record roles.

A state is an (action, status) pair shown joined as ``ACTION_STATUS``. The
transition table says which stack operation may not start on which
action; ``check_transition`` is pure so it is cheap to test, and it is
what the engine consults (``traversal.ops.check_start``).
"""

import enum


class Action(enum.StrEnum):
    INIT = "INIT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    ROLLBACK = "ROLLBACK"
    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    CHECK = "CHECK"
    ADOPT = "ADOPT"
    SNAPSHOT = "SNAPSHOT"
    RESTORE = "RESTORE"


class Status(enum.StrEnum):
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class Role(enum.StrEnum):
    """Role of one version of a resource record."""

    CURRENT = "current"  # represents the resource in the goal template
    REPLACED = "replaced"  # superseded by a replacement, kept for rollback
    PENDING_DELETE = "pending-delete"  # not in the goal; to be deleted
    # deleted and kept as history (``/versions``) once the stack finished;
    # never chosen, revived or listed as a live resource again
    HISTORY = "history"


# Roles of the records a resource list may show: a resource being deleted
# stays visible (with its DELETE_* status) until its stack finishes.
LISTED_ROLES = (Role.CURRENT, Role.REPLACED, Role.PENDING_DELETE)


# Which stack operation refuses to start while the stack is in a given
# action, and what the 400 error says (Heat's rules):
# {operation: {the stack's current action: why it is refused}}. Any pair
# not listed is accepted: convergence starts a new operation on top of
# one in progress (an update on an update, a delete on anything), so the
# table is about what makes sense, not about locking. A deleted stack
# refuses everything (404). ``traversal.ops`` consults it twice: before
# starting (``check_start``) and in the conditional write that starts the
# traversal, so a stack that took a refused action meanwhile refuses too.
_REFUSED = {
    # an update of a stack being deleted, or of a suspended one (which
    # must be resumed first)
    Action.UPDATE: {
        Action.DELETE: "Updating a stack when it is deleting",
        Action.SUSPEND: "Updating a stack when it is suspended",
    },
    # nothing but another delete follows a delete
    Action.SUSPEND: {Action.DELETE: "Suspend of a stack being deleted"},
    Action.RESUME: {Action.DELETE: "Resume of a stack being deleted"},
    Action.CHECK: {Action.DELETE: "Check of a stack being deleted"},
    Action.ROLLBACK: {Action.DELETE: "Rollback of a stack being deleted"},
    # a snapshot or restore needs a stack that is neither going away nor
    # suspended
    Action.SNAPSHOT: {
        Action.DELETE: "Snapshot of a stack being deleted",
        Action.SUSPEND: "Snapshot of a suspended stack",
    },
    Action.RESTORE: {
        Action.DELETE: "Restoring a stack when it is deleting",
        Action.SUSPEND: "Restoring a stack when it is suspended",
    },
}


def check_transition(current, new):
    """Why stack operation ``new`` may not start on a stack whose action
    is ``current``, or None if it may.

    Pure, so that the table is cheap to walk in a test.
    """
    return _REFUSED.get(Action(new), {}).get(Action(current))


def refused_from(new):
    """The stack actions operation ``new`` refuses to start on (what the
    conditional write that starts it excludes)."""
    return frozenset(_REFUSED.get(Action(new), ()))


def joined(action, status):
    """Return Heat's joined status string, e.g. ``CREATE_COMPLETE``."""
    return "%s_%s" % (action, status)
