"""Every state vocabulary of heat_lite, each with its transition table.

Stack and resource states, as Heat spells them: an (action, status) pair
shown joined as ``ACTION_STATUS``; ``check_transition`` says which stack
operation may not start on which action (pure, so cheap to test; the
engine consults it in ``traversal.ops.check_start``). The record roles.

Then one ``Vocabulary`` per kind of row with a ``status`` of its own:
rollouts, rollout targets, promotions, verifications (the outcome of a
verified update), snapshots and app builds -- its states in display
order, its named groups (what a query filters by), and which state may
follow which. The
engine, the API's schemas and the db queries use these; the API serves
them as ``GET /v1/states.json`` (``as_dict``) for the dashboard and the
OSC plugin, so no client keeps a copy.
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


class Vocabulary:
    """The states one kind of row takes, and their transitions.

    Each state is an attribute of the same name (``ROLLOUT.PAUSED``), a
    plain string as stored; a group is a tuple of states
    (``ROLLOUT.ACTIVE``).

    :param name: what the vocabulary is of (its key in ``as_dict``).
    :param transitions: {state: the states that may follow it}, every
        state a key, in display order.
    :param groups: {NAME: states}: the sets the code tests and queries
        filter by.
    """

    def __init__(self, name, transitions, **groups):
        self.name = name
        self.states = tuple(transitions)
        self.transitions = {
            state: tuple(after) for state, after in transitions.items()
        }
        self.groups = {key: tuple(group) for key, group in groups.items()}
        for state in self.states:
            setattr(self, state, state)
        for key, group in self.groups.items():
            unknown = set(group) - set(self.states)
            if unknown:
                raise ValueError("%s.%s: %s" % (name, key, unknown))
            setattr(self, key, self.groups[key])
        for state, after in self.transitions.items():
            unknown = set(after) - set(self.states)
            if unknown:
                raise ValueError("%s: %s -> %s" % (name, state, unknown))

    def __iter__(self):
        return iter(self.states)

    def __contains__(self, state):
        return state in self.transitions

    def may_follow(self, current, new):
        """True if ``new`` may follow ``current``."""
        return new in self.transitions.get(current, ())

    def as_dict(self):
        """The vocabulary as JSON: {"states", "transitions", "groups"}."""
        return {
            "states": list(self.states),
            "transitions": {s: list(a) for s, a in self.transitions.items()},
            "groups": {k: list(g) for k, g in self.groups.items()},
        }


# A stack's (and a resource's) status; the action is ``Action``.
STACK = Vocabulary(
    "stack",
    {
        Status.IN_PROGRESS: (Status.COMPLETE, Status.FAILED),
        Status.COMPLETE: (Status.IN_PROGRESS,),
        Status.FAILED: (Status.IN_PROGRESS,),
    },
    FINISHED=(Status.COMPLETE, Status.FAILED),
)

# A rollout (``engine.fleet.rollout``): paused and resumed between
# batches; cancelled; rolled back (even once finished: back to
# IN_PROGRESS with ``rollback_requested`` set, until CANCELLED, or
# FAILED when a target could not go back).
ROLLOUT = Vocabulary(
    "rollout",
    {
        "IN_PROGRESS": ("PAUSED", "COMPLETE", "FAILED", "CANCELLED"),
        "PAUSED": ("IN_PROGRESS",),
        "COMPLETE": ("IN_PROGRESS",),
        "FAILED": ("IN_PROGRESS",),
        "CANCELLED": ("IN_PROGRESS",),
    },
    ACTIVE=("IN_PROGRESS", "PAUSED"),
    FINISHED=("COMPLETE", "FAILED", "CANCELLED"),
)

# One target (stack) of a rollout: its verified update, and its update
# back when the whole rollout is rolled back.
ROLLOUT_TARGET = Vocabulary(
    "rollout_target",
    {
        "PENDING": ("UPDATING", "SKIPPED", "FAILED"),
        "UPDATING": (
            "VERIFYING",
            "SUCCEEDED",
            "ROLLING_BACK",
            "ROLLED_BACK",
            "FAILED",
            "SKIPPED",
        ),
        "VERIFYING": ("SUCCEEDED", "ROLLING_BACK", "ROLLED_BACK", "FAILED"),
        "SUCCEEDED": ("ROLLING_BACK",),
        "ROLLING_BACK": ("ROLLED_BACK", "FAILED"),
        "ROLLED_BACK": (),
        "FAILED": (),
        "SKIPPED": (),
    },
    TERMINAL=("SUCCEEDED", "ROLLED_BACK", "FAILED", "SKIPPED"),
    FAILURES=("ROLLED_BACK", "FAILED"),
    # An update (or an update back) under way.
    RUNNING=("UPDATING", "VERIFYING", "ROLLING_BACK"),
    # A change undone: the stack back where it was.
    ROLLBACK=("ROLLING_BACK", "ROLLED_BACK"),
    # Shown as noteworthy by the CLI (``rollout show``).
    NOTEWORTHY=("ROLLED_BACK", "FAILED", "SKIPPED"),
)

# A promotion (``engine.fleet.promotion``): COMPLETE once its gate passed
# (or its rollback failed: the target stays promoted), FAILED when the
# gate failed (the target back as it was), ROLLED_BACK by its rollback.
PROMOTION = Vocabulary(
    "promotion",
    {
        "IN_PROGRESS": ("COMPLETE", "FAILED", "ROLLED_BACK"),
        "COMPLETE": ("IN_PROGRESS",),
        "FAILED": (),
        "ROLLED_BACK": (),
    },
    ACTIVE=("IN_PROGRESS",),
    FINISHED=("COMPLETE", "FAILED", "ROLLED_BACK"),
    # The promotions whose snapshot is (or is becoming) the target's.
    CHANGED=("IN_PROGRESS", "COMPLETE"),
    # Undone already: by a failed gate, or by its rollback.
    UNDONE=("FAILED", "ROLLED_BACK"),
)

# What became of a verified update (``traversal.verify.outcome``).
VERIFICATION = Vocabulary(
    "verification",
    {
        "UPDATING": (
            "VERIFYING",
            "ROLLING_BACK",
            "ROLLED_BACK",
            "FAILED",
            "SUPERSEDED",
            "DELETED",
        ),
        "VERIFYING": (
            "CLEANING_UP",
            "SUCCEEDED",
            "ROLLING_BACK",
            "ROLLED_BACK",
            "FAILED",
            "SUPERSEDED",
            "DELETED",
        ),
        "CLEANING_UP": ("SUCCEEDED", "SUPERSEDED_AFTER_PASS", "DELETED"),
        "SUCCEEDED": ("SUPERSEDED_AFTER_PASS", "DELETED"),
        "ROLLING_BACK": ("ROLLED_BACK", "FAILED", "SUPERSEDED", "DELETED"),
        "ROLLED_BACK": ("SUPERSEDED", "DELETED"),
        "FAILED": ("SUPERSEDED", "DELETED"),
        "SUPERSEDED_AFTER_PASS": ("DELETED",),
        "SUPERSEDED": ("DELETED",),
        "DELETED": (),
    },
    # Still running: a rollout target follows it.
    RUNNING=("UPDATING", "VERIFYING", "CLEANING_UP", "ROLLING_BACK"),
)

# A stack snapshot.
SNAPSHOT = Vocabulary(
    "snapshot",
    {
        "IN_PROGRESS": ("COMPLETE", "FAILED"),
        "COMPLETE": (),
        "FAILED": (),
    },
)

# An image heat_lite built, under retention (doc/specs/image_retention.md):
# NEEDED while anything names it; UNNEEDED once nothing does (``report``
# mode stops there); HIDDEN in Glance during the grace; DELETING once the
# pass decided (a use can no longer revive it), DELETED when Glance
# confirmed. A use revives an UNNEEDED or HIDDEN image.
IMAGE = Vocabulary(
    "image",
    {
        "NEEDED": ("UNNEEDED",),
        "UNNEEDED": ("NEEDED", "HIDDEN", "DELETING"),
        "HIDDEN": ("NEEDED", "DELETING"),
        "DELETING": ("DELETED",),
        "DELETED": (),
    },
    # A use may take these (straight, or after un-hiding in Glance).
    USABLE=("NEEDED", "UNNEEDED", "HIDDEN"),
    GONE=("DELETING", "DELETED"),
)
# What an image event says retention did to an image (the events of an
# image and of its app): hidden in Glance, deleted from it, revived (shown
# again for a use), delete_failed (Glance refused; tried again).
IMAGE_EVENTS = ("hidden", "deleted", "revived", "delete_failed")


# A build of an app (doc/specs/apps.md, ``engine.fleet.app``): a push
# becomes an image (BUILDING, UPLOADING) and then the branch's stack is
# updated to it as a verified update (DEPLOYING, VERIFYING). Per (app,
# branch) at most one build is past QUEUED and not final.
BuildStatus = Vocabulary(
    "build",
    {
        # waiting for a builder worker; a newer push of the branch
        # supersedes it, a user cancels it at once
        "QUEUED": ("BUILDING", "SUPERSEDED", "CANCELLED", "FAILED"),
        # fetching the commit and running the builder plugin; a newer push
        # may stop it early (nothing of it was deployed)
        "BUILDING": ("UPLOADING", "SUPERSEDED", "CANCELLED", "FAILED"),
        # the image goes to Glance until active; a newer build of the
        # branch found before deploying stops it (its image deleted)
        "UPLOADING": ("DEPLOYING", "SUPERSEDED", "CANCELLED", "FAILED"),
        # the branch's stack created or updated to the new image; an app
        # without checks is DEPLOYED once the update completes, a failed
        # update that rolled the stack back is REJECTED
        "DEPLOYING": (
            "VERIFYING",
            "DEPLOYED",
            "REJECTED",
            "CANCELLED",
            "FAILED",
        ),
        # the app's checks run on the updated stack: pass -> DEPLOYED,
        # fail -> REJECTED (the stack rolled back onto the previous image)
        "VERIFYING": ("DEPLOYED", "REJECTED", "CANCELLED", "FAILED"),
        "DEPLOYED": (),
        "FAILED": (),
        "REJECTED": (),
        "SUPERSEDED": (),
        "CANCELLED": (),
    },
    FINISHED=("DEPLOYED", "FAILED", "REJECTED", "SUPERSEDED", "CANCELLED"),
    # owned by a builder worker (a fenced claim)
    RUNNING=("BUILDING", "UPLOADING", "DEPLOYING", "VERIFYING"),
    # got past the deploy gate: its image went to the branch's stack
    REACHED_DEPLOY=("DEPLOYING", "VERIFYING", "DEPLOYED", "REJECTED"),
    # not final
    ACTIVE=("QUEUED", "BUILDING", "UPLOADING", "DEPLOYING", "VERIFYING"),
)
BUILD = BuildStatus

# One traversal of a stack as its history shows it (``db.traversal_log``,
# GET .../traversals): QUEUED (an update waiting behind the running one,
# a stack with ``queue`` update semantics), RUNNING, then COMPLETE or
# FAILED, SUPERSEDED (a newer operation took the stack over: the row
# names it) or CANCELLED (a queued one cancelled, or its stack deleted).
TRAVERSAL = Vocabulary(
    "traversal",
    {
        "QUEUED": ("RUNNING", "CANCELLED"),
        "RUNNING": ("COMPLETE", "FAILED", "SUPERSEDED", "CANCELLED"),
        "COMPLETE": (),
        "FAILED": (),
        "SUPERSEDED": (),
        "CANCELLED": (),
    },
    FINISHED=("COMPLETE", "FAILED", "SUPERSEDED", "CANCELLED"),
)

# A saved plan of an update (``db.plans``, doc/specs/saved_plans.md):
# READY until applied (APPLIED) or found stale by an apply (STALE: a
# record, a traversal or the drift report it was computed against
# changed); a READY plan past its expiry is shown EXPIRED (told at read,
# never stored).
PLAN = Vocabulary(
    "plan",
    {
        "READY": ("APPLIED", "STALE", "EXPIRED"),
        "APPLIED": (),
        "STALE": (),
        "EXPIRED": (),
    },
    FINISHED=("APPLIED", "STALE", "EXPIRED"),
)

# What an update does while another operation runs on its stack (the
# stack's ``update_semantics``; NULL is CONVERGE): take the stack over
# (Heat's convergence), wait its turn in the stack's queue, or be refused
# (409, as CloudFormation).
UPDATE_SEMANTICS = ("converge", "queue", "reject")
CONVERGE, QUEUE, REJECT = UPDATE_SEMANTICS

VOCABULARIES = (
    STACK,
    ROLLOUT,
    ROLLOUT_TARGET,
    PROMOTION,
    VERIFICATION,
    SNAPSHOT,
    IMAGE,
    BuildStatus,
    TRAVERSAL,
    PLAN,
)


def as_dict():
    """Every vocabulary, as ``GET /v1/states.json`` serves it; the
    stack's with its actions too."""
    result = {v.name: v.as_dict() for v in VOCABULARIES}
    result["stack"]["actions"] = [a.value for a in Action]
    return result
