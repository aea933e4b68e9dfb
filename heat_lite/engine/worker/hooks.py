"""Breakpoints from the environment (``hooks: pre-create`` ...).

A resource that reaches a hook writes Heat's "<ACTION> paused until Hook
<hook> is cleared" event, marks its record (``resource.hook``) and polls
until a signal ``{"unset_hook": "<hook>"}`` clears the mark; independent
branches of the graph go on meanwhile. The record is not locked while it
waits, so a newer traversal or a delete is never blocked by a hook.
"""

from heat_lite.common import exception
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.engine import definitions
from heat_lite.engine.template import registry as type_registry

HOOKS = (
    "pre-create",
    "pre-update",
    "pre-delete",
    "post-create",
    "post-update",
    "post-delete",
)
POLL_SECONDS = 0.5


def configured(record):
    """The hooks the stack's environment sets on this record's name."""
    try:
        bound = definitions.get(
            record["stack_template_id"], definitions.stack_info(record)
        )
    except exception.HeatLiteException:
        return set()
    return type_registry.hooks(bound.environment, record["name"])


def hold(record, traversal, hook, action, state):
    """Decide whether ``record`` must wait at ``hook`` in ``traversal``.

    :param state: (action, status) the event reports.
    :returns: False to go on (no hook, or cleared); True to wait.
    """
    key = "%s %s" % (hook, traversal)
    current = record.get("hook")
    if current == key + " cleared":
        return False
    if current == key + " pending":
        return True
    event = db_events.event_values(
        record["stack_id"],
        record["name"],
        record["physical_resource_id"],
        state[0],
        state[1],
        "%s paused until Hook %s is cleared" % (action, hook),
        record["type"],
    )
    db_records.resource_hook_swap(
        record["id"], current, key + " pending", [event]
    )
    return True


def cleared(record_id, hook, traversal):
    """True once the hook of this traversal was cleared."""
    record = db_records.resource_load(record_id)
    return record is None or record.get("hook") != "%s %s pending" % (
        hook,
        traversal,
    )


def clear(stack_id, resource_name, hook):
    """Clear a pending hook (the ``unset_hook`` signal).

    :raises InvalidBreakPointHook: if the resource is not waiting on it.
    """
    if hook not in HOOKS:
        raise exception.InvalidBreakPointHook(
            message='Invalid hook type "%s"' % hook
        )
    record = db_records.resource_pending_hook(stack_id, resource_name, hook)
    if record is None:
        raise exception.InvalidBreakPointHook(
            message='The "%s" hook is not defined on %s'
            % (hook, resource_name)
        )
    event = db_events.event_values(
        stack_id,
        resource_name,
        record["physical_resource_id"],
        record["action"],
        record["status"],
        "Hook %s is cleared" % hook,
        record["type"],
    )
    db_records.resource_hook_swap(
        record["id"],
        record["hook"],
        record["hook"].replace(" pending", " cleared"),
        [event],
    )
