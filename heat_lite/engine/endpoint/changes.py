"""Change marks of a stack and of a project's stacks (``stack_changes``,
``project_changes``): short opaque strings that change when what a stack
page (or the stacks list) shows changes, read in one statement
(``db.changes``) without binding a template or resolving an output. A
page polls them and reads the stack, its resources or its events again
only when their mark moved.
"""

import hashlib

from heat_lite.common import exception, states
from heat_lite.db import changes as db_changes
from heat_lite.engine.endpoint.base import TARGET, expected

_RECORDS = ("records", "record_writes", "last_record")
_EVENTS = ("first_event", "last_event")
_PROMOTIONS = ("promotions", "promotions_complete", "last_promoted")


def mark(values):
    """A short digest of ``values`` (any repr-able sequence)."""
    return hashlib.sha256(repr(tuple(values)).encode()).hexdigest()[:16]


def stack_changes_view(row):
    """The answer of ``stack_changes`` from ``db.changes.stack_marks``."""
    stack_part = [row[c] for c in db_changes.STACK_MARK_COLUMNS + _PROMOTIONS]
    records = [row[c] for c in _RECORDS]
    return {
        "stack_status": states.joined(row["action"], row["status"]),
        # The header shows outputs, resolved from the records.
        "stack": mark(stack_part + records),
        "resources": mark(records),
        "events": mark([row[c] for c in _EVENTS]),
    }


class ChangesEndpoint:
    """The change marks of the [engine] topic (RPC 1.8)."""

    target = TARGET

    @expected
    def stack_changes(self, ctxt, stack_identity):
        """{stack_status, stack, resources, events}: the stack's status
        and a mark of each part of its page.

        :raises StackNotFound: no such stack in the caller's project, or
            its name is not the identity's.
        """
        if not isinstance(stack_identity, dict) or not isinstance(
            stack_identity.get("stack_id"), str
        ):
            raise exception.StackNotFound(name=str(stack_identity))
        row = db_changes.stack_marks(
            stack_identity["stack_id"], ctxt.project_id
        )
        name = stack_identity.get("stack_name")
        if name and name != row["name"]:
            raise exception.StackNotFound(name=name)
        return stack_changes_view(row)

    @expected
    def project_changes(self, ctxt):
        """{stacks}: a mark of the caller's project's stacks (their
        number, statuses and times)."""
        row = db_changes.project_marks(ctxt.project_id)
        return {"stacks": mark(row[k] for k in sorted(row))}
