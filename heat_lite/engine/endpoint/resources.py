"""The resource half of the engine endpoint: metadata, signals and
marking a resource (un)healthy.

A signal or a mark changes a record at rest: the write is conditional on
nobody holding the record's lock and on the version read (``atomic_key``),
so it can never overwrite what a running action writes.
"""

import json

from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.engine import definitions
from heat_lite.engine.endpoint.base import (
    TARGET,
    expected,
    find_record,
    find_stack,
)
from heat_lite.engine.endpoint.reads import resource_metadata
from heat_lite.engine.worker import hooks

UNHEALTHY_REASON = "state changed by resource_mark_unhealthy api"


def _event(record, action, status, reason):
    return db_events.event_values(
        record["stack_id"],
        record["name"],
        record["physical_resource_id"],
        action,
        status,
        reason,
        record["type"],
    )


def _busy(stack, record):
    return exception.ActionInProgress(
        stack_name=stack["name"], action=record["action"]
    )


def _token_may_signal(stack, resource_name, token):
    """Refuse a handle token that is not the token of ``resource_name``.

    :raises Forbidden: another resource's token, or a resource that has
        none (not a TOKEN_SIGNAL handle).
    """
    plugin = definitions.plugin_for(find_record(stack, resource_name))
    matches = getattr(plugin, "signal_token_matches", None)
    if matches is None or not matches(token):
        raise exception.Forbidden(action="signal %s" % resource_name)


class ResourceEndpoint:
    """Resource metadata, signal and mark-unhealthy."""

    target = TARGET

    @expected
    def resource_metadata(self, ctxt, stack_identity, resource_name):
        stack = find_stack(ctxt, stack_identity)
        return resource_metadata(stack, find_record(stack, resource_name))

    @expected
    def resource_signal(self, ctxt, stack_identity, resource_name, details):
        stack = find_stack(ctxt, stack_identity, live=True)
        token = getattr(ctxt, "handle_token", None)
        if token is not None:
            # A handle's own token (keystone mode): only that handle.
            _token_may_signal(stack, resource_name, token)
        if isinstance(details, dict) and "unset_hook" in details:
            # A breakpoint is cleared whatever the resource type.
            hooks.clear(stack["id"], resource_name, details["unset_hook"])
            return None
        record = find_record(stack, resource_name)
        plugin = definitions.plugin_for(record)
        handle = getattr(plugin, "handle_signal", None)
        if handle is None:
            raise exception.ResourceActionNotSupported(action="Signal")
        if record["action"] in (Action.SUSPEND, Action.DELETE):
            raise exception.NotSupported(
                feature="Signal resource during %s" % record["action"]
            )
        if record["engine_id"] or record["status"] == Status.IN_PROGRESS:
            raise _busy(stack, record)
        metadata = resource_metadata(stack, record)
        plugin.metadata = json.loads(json.dumps(metadata))
        try:
            reason = handle(details)
        except exception.HeatLiteException:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's failure
            reason = "%s: %s" % (type(exc).__name__, exc)
            db_records.resource_set_if_unlocked(
                record["id"],
                record["atomic_key"],
                {},
                [_event(record, "SIGNAL", Status.FAILED, reason)],
            )
            raise exception.Invalid(
                message="Signal to resource %s failed: "
                "%s" % (record["name"], reason)
            ) from None
        values = {}
        if plugin.data_changed:
            values["rsrc_data"] = json.dumps(plugin.data())
        if plugin.metadata != metadata:
            values["rsrc_metadata"] = json.dumps(plugin.metadata)
        reason = (
            reason
            if isinstance(reason, str) and reason
            else "Signal: %s" % json.dumps(details, sort_keys=True)[:200]
        )
        if not db_records.resource_set_if_unlocked(
            record["id"],
            record["atomic_key"],
            values,
            [_event(record, "SIGNAL", Status.COMPLETE, reason)],
        ):
            raise _busy(stack, record)

    @expected
    def resource_mark_unhealthy(
        self,
        ctxt,
        stack_identity,
        resource_name,
        mark_unhealthy,
        resource_status_reason=None,
    ):
        stack = find_stack(ctxt, stack_identity, live=True)
        record = find_record(stack, resource_name, physical_too=True)
        if record["engine_id"] or record["status"] == Status.IN_PROGRESS:
            raise _busy(stack, record)
        reason = resource_status_reason or UNHEALTHY_REASON
        if mark_unhealthy:
            status = Status.FAILED
        elif (record["action"], record["status"]) == (
            Action.CHECK,
            Status.FAILED,
        ):
            status = Status.COMPLETE
        else:
            return
        values = {
            "action": Action.CHECK,
            "status": status,
            "status_reason": reason,
        }
        if not db_records.resource_set_if_unlocked(
            record["id"],
            record["atomic_key"],
            values,
            [_event(record, Action.CHECK, status, reason)],
        ):
            raise _busy(stack, record)
