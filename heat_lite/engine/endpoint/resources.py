"""The resource half of the engine endpoint: metadata, signals and
marking a resource (un)healthy.

A signal or a mark changes a record at rest: the write is conditional on
nobody holding the record's lock and on the version read (``atomic_key``),
so it can never overwrite what a running action writes. A signal is at
most ``[DEFAULT] max_signal_size`` bytes. A type that gives its signals
to the engine to keep (``signal_entry``: the wait condition handles)
has each one stored in a row of its own (``db.signals``; nobody may hold
the record's lock, whose data it does not touch), at most
``max_signals_per_handle`` distinct ids, and shown in its metadata.
"""

import json

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import records as db_records
from heat_lite.db import signals as db_signals
from heat_lite.engine import definitions
from heat_lite.engine.endpoint import software_deployments
from heat_lite.engine.endpoint.base import (
    TARGET,
    expected,
    find_record,
    find_stack,
)
from heat_lite.engine.endpoint.reads import resource_metadata
from heat_lite.engine.worker import hooks
from heat_lite.resources import services as plugin_services

CONF = conf.CONF
UNHEALTHY_REASON = "state changed by resource_mark_unhealthy api"
# The type whose metadata lists its deployments.
SERVER_TYPE = "OS::Nova::Server"


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


def _token_may_signal(stack, resource_name, token, services):
    """Refuse a handle token that is not the token of ``resource_name``.

    :raises Forbidden: another resource's token, or a resource that has
        none (not a TOKEN_SIGNAL handle).
    """
    record = find_record(stack, resource_name)
    # The plugin may look in its project (a deployment reads its own).
    plugin = definitions.plugin_for(
        dict(record, stack_tenant=stack["tenant"]), services
    )
    matches = getattr(plugin, "signal_token_matches", None)
    if matches is None or not matches(token):
        raise exception.Forbidden(action="signal %s" % resource_name)


def _check_size(details):
    """:raises SignalTooLarge: a body above ``max_signal_size`` (its
    JSON, as it came, with non-ASCII characters escaped)."""
    size = len(json.dumps(details, separators=(",", ":")))
    if size > CONF.max_signal_size:
        raise exception.SignalTooLarge(size=size, limit=CONF.max_signal_size)


def _keep_signal(stack, record, plugin, details):
    """Store a signal of a type that gives them to the engine to keep:
    its own row and event, whatever it kept before."""

    def build(count):
        key, entry, reason = plugin.signal_entry(details, count)
        return key, entry, _event(record, "SIGNAL", Status.COMPLETE, reason)

    limit = CONF.max_signals_per_handle
    outcome = db_signals.signal_keep(record["id"], build, limit)
    if outcome == db_signals.BUSY:
        raise _busy(stack, record)
    if outcome == db_signals.FULL:
        raise exception.TooManySignals(name=record["name"], limit=limit)


def metadata_of(stack, record, services):
    """The resource's metadata; a type whose signals the engine keeps
    shows them there, ``{id: signal}``, as Heat's handles do."""
    metadata = resource_metadata(stack, record, services)
    if hasattr(definitions.plugin_for(record, services), "signal_entry"):
        metadata = dict(metadata, **db_signals.resource_signals(record["id"]))
    if record["type"] == SERVER_TYPE and record["physical_resource_id"]:
        # What os-collect-config reads: the server's deployments, as
        # they are now (Heat writes them into the server's metadata).
        metadata = dict(
            metadata,
            deployments=software_deployments.server_deployments(
                stack["tenant"], record["physical_resource_id"]
            ),
        )
    return metadata


def _deployment_signal(stack, record, details):
    """A deployment resource's signal goes to its deployment (whatever
    state the resource is in: it waits for it IN_PROGRESS); the resource
    completes when its check sees the deployment's new status."""
    if not record["physical_resource_id"]:
        raise exception.Invalid(
            message="Resource %s has no deployment to signal" % record["name"]
        )
    reason = software_deployments.signal_deployment(
        stack["tenant"], record["physical_resource_id"], details
    )
    db_events.event_create(_event(record, "SIGNAL", Status.COMPLETE, reason))


def _plugin_signal(stack, record, plugin, details):
    """Run the plugin's ``handle_signal``; store what it changed in its
    data and metadata, with the SIGNAL event, if the record is still the
    version read and nobody locked it meanwhile."""
    metadata = resource_metadata(stack, record, plugin.services)
    plugin.metadata = json.loads(json.dumps(metadata))
    try:
        reason = plugin.handle_signal(details)
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


class ResourceEndpoint:
    """Resource metadata, signal and mark-unhealthy.

    :param services: the plugins' services (``definitions.plugin_for``).
    """

    target = TARGET

    def __init__(self, services):
        self.services: plugin_services.Services = services

    @expected
    def resource_metadata(self, ctxt, stack_identity, resource_name):
        stack = find_stack(ctxt, stack_identity)
        return metadata_of(
            stack, find_record(stack, resource_name), self.services
        )

    @expected
    def resource_signal(self, ctxt, stack_identity, resource_name, details):
        _check_size(details)
        stack = find_stack(ctxt, stack_identity, live=True)
        token = getattr(ctxt, "handle_token", None)
        if token is not None:
            # A handle's own token (keystone mode): only that handle.
            _token_may_signal(stack, resource_name, token, self.services)
        if isinstance(details, dict) and "unset_hook" in details:
            # A breakpoint is cleared whatever the resource type.
            hooks.clear(stack["id"], resource_name, details["unset_hook"])
            return None
        record = find_record(stack, resource_name)
        plugin = definitions.plugin_for(record, self.services)
        if getattr(plugin, "signals_deployment", False):
            return _deployment_signal(stack, record, details)
        keeps = hasattr(plugin, "signal_entry")
        if not keeps and not hasattr(plugin, "handle_signal"):
            raise exception.ResourceActionNotSupported(action="Signal")
        if record["action"] in (Action.SUSPEND, Action.DELETE):
            raise exception.NotSupported(
                feature="Signal resource during %s" % record["action"]
            )
        if record["engine_id"] or record["status"] == Status.IN_PROGRESS:
            raise _busy(stack, record)
        if keeps:
            return _keep_signal(stack, record, plugin, details)
        return _plugin_signal(stack, record, plugin, details)

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
