"""Export and abandon: a stack tree in Heat's abandon format, and taking
a stack tree out of heat_lite without touching its physical resources.

The data (``{name, id, action, status, template, environment, files,
resources, project_id, stack_user_project_id, tags}``) names each
resource's ``resource_id``, ``resource_data`` and ``metadata``; a
resource that owns a nested stack carries that stack's resources under
``resources``, so adopting the data brings the whole tree back. Reads
are one query per nesting level plus one for every record of the tree
and one for the signals they keep.
"""

import json
import uuid

from heat_lite.common import exception, notify
from heat_lite.common.states import Action, Status
from heat_lite.db import records as db_records
from heat_lite.db import signals as db_signals
from heat_lite.db import stacks as db_stacks
from heat_lite.db import templates as db_templates
from heat_lite.db import traversals as db_traversals
from heat_lite.engine import trusts
from heat_lite.engine.traversal.ops import stack_event


def _tree(stack):
    """[stack, descendants...] breadth first (live stacks only)."""
    return [stack] + [
        s for _level, s in db_stacks.stack_descendants([stack["id"]])
    ]


def _resources(stack_id, records, children, kept):
    """{name: abandon entry} of one stack; nested stacks recursively.

    :param kept: {record id: signals} of the records that keep signals
        (``db.signals``): in the handle's metadata, where Heat has them,
        and in its data's ``signals``, as before they had rows of their
        own.
    """
    current = {}
    for record in records.get(stack_id, ()):
        current[record["name"]] = record  # the newest version wins
    result = {}
    for name, record in current.items():
        entry = {
            "name": name,
            "type": record["type"],
            "action": record["action"],
            "status": record["status"],
            "resource_id": record["physical_resource_id"],
            "resource_data": json.loads(record["rsrc_data"] or "{}"),
            "metadata": json.loads(record["rsrc_metadata"] or "{}"),
        }
        signals = kept.get(record["id"])
        if signals and "signals" in entry["resource_data"]:
            entry["resource_data"]["signals"] = signals
            entry["metadata"].update(signals)
        child = children.get(record["physical_resource_id"])
        if child is not None and child["owner_id"] == stack_id:
            entry["resources"] = _resources(
                child["id"], records, children, kept
            )
        result[name] = entry
    return result


def export(stack):
    """Heat's abandon data of ``stack`` and the stacks nested in it."""
    tree = _tree(stack)
    return _data(stack, tree)


def _data(stack, tree):
    records = db_records.resources_of_stacks([s["id"] for s in tree])
    kept = db_signals.stacks_signals([s["id"] for s in tree])
    children = {s["id"]: s for s in tree[1:]}
    stored = db_templates.raw_template_get(stack["raw_template_id"])
    return {
        "name": stack["name"],
        "id": stack["id"],
        "action": stack["action"],
        "status": stack["status"],
        "template": stored["template"],
        "environment": stored["environment"],
        "files": stored["files"],
        "resources": _resources(stack["id"], records, children, kept),
        "project_id": stack["tenant"],
        "stack_user_project_id": stack["tenant"],
        "tags": json.loads(stack["tags"]) if stack["tags"] else None,
    }


def abandon(stack):
    """Return the abandon data of ``stack`` and remove the stack and its
    nested stacks, leaving every physical resource as it is.

    :raises ActionInProgress: if an operation runs on the stack (or on
        a stack nested in it), as Heat's stack lock would refuse it.
    """
    tree = _tree(stack)
    for member in tree:
        if member["status"] == Status.IN_PROGRESS:
            raise exception.ActionInProgress(
                stack_name=stack["name"], action=member["action"]
            )
    data = _data(stack, tree)
    # The physical resources stay; the trust heat_lite acted through goes
    # (Heat does the same): nobody acts on them through heat_lite again.
    trusts.delete(stack["trust_id"])
    for member in reversed(tree):  # the deepest first
        _remove(member, stack)
    notify.stack_event(stack, Action.DELETE, "end")
    return data


def _remove(member, root):
    """Soft-delete one stack and drop its records, guarded by the
    traversal seen, with Heat's two DELETE events."""
    reason = "Stack DELETE completed successfully"
    values = {
        "action": Action.DELETE,
        "status": Status.COMPLETE,
        "status_reason": reason,
        "current_traversal": str(uuid.uuid4()),
    }
    events = [
        stack_event(
            member, Action.DELETE, Status.IN_PROGRESS, "Stack DELETE started"
        ),
        stack_event(member, Action.DELETE, Status.COMPLETE, reason),
    ]
    if not db_traversals.stack_finish(
        member["id"],
        member["current_traversal"],
        values,
        events,
        purge=True,
        delete=True,
        running=False,
    ):
        raise exception.ActionInProgress(
            stack_name=root["name"], action=Action.DELETE
        )
