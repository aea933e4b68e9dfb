"""Stack and resource states, as Heat spells them, and the record roles.

A state is an (action, status) pair shown joined as ``ACTION_STATUS``. The
transition table says which action may follow which; ``check_transition``
is pure so it is cheap to test.
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


# Which stack action may start while the stack is in a given action.
# Convergence accepts a new operation on top of one in progress, so the
# table is about what makes sense, not about locking.
_STACK_TRANSITIONS = {
    # from action: actions that may start next
    Action.INIT: {Action.CREATE, Action.ADOPT, Action.DELETE},
    # a create may be superseded by an update or a delete, or rolled back
    Action.CREATE: {
        Action.UPDATE,
        Action.DELETE,
        Action.ROLLBACK,
        Action.SUSPEND,
        Action.CHECK,
    },
    Action.ADOPT: {Action.UPDATE, Action.DELETE, Action.ROLLBACK},
    # updates stack on updates: that is the point of convergence
    Action.UPDATE: {
        Action.UPDATE,
        Action.DELETE,
        Action.ROLLBACK,
        Action.SUSPEND,
        Action.CHECK,
    },
    Action.ROLLBACK: {
        Action.UPDATE,
        Action.DELETE,
        Action.SUSPEND,
        Action.CHECK,
    },
    # a suspended stack must be resumed (or deleted) before anything else
    Action.SUSPEND: {Action.RESUME, Action.DELETE, Action.SUSPEND},
    Action.RESUME: {
        Action.UPDATE,
        Action.DELETE,
        Action.SUSPEND,
        Action.CHECK,
        Action.RESUME,
    },
    Action.CHECK: {
        Action.UPDATE,
        Action.DELETE,
        Action.SUSPEND,
        Action.CHECK,
        Action.ROLLBACK,
    },
    # a delete can only be retried
    Action.DELETE: {Action.DELETE},
}


def check_transition(current, new):
    """Return True if stack action ``new`` may follow ``current``."""
    return Action(new) in _STACK_TRANSITIONS[Action(current)]


def joined(action, status):
    """Return Heat's joined status string, e.g. ``CREATE_COMPLETE``."""
    return "%s_%s" % (action, status)
