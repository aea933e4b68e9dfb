"""Notifications: ``orchestration.stack.<action>.start|end|error`` and
``orchestration.resource.<action>.start|end|error``.

The engine emits one oslo.messaging notification when a stack traversal
starts, completes and fails, with the payload keys Heat uses
(``tenant_id``, ``user_id``, ``stack_id``, ``stack_identity``,
``stack_name``, ``state``, ``state_reason``, ``create_at``,
``updated_at``, ``tags``, ``description``). They go through
``[oslo_messaging_notifications]``: no driver configured (the default)
means nothing is sent; ``driver = messagingv2`` sends them on the same
transport as RPC unless ``[oslo_messaging_notifications] transport_url``
says otherwise. Sending never fails the operation that triggered it.

``orchestration.stack.drift.drifted`` is sent when a drift detection
finds a stack DRIFTED that was not before (``engine.drift.detect``):
the stack payload (its state as it is) with ``drift_status`` and
``drift_counts`` ({IN_SYNC, MODIFIED, DELETED, NOT_CHECKED: n}).

Resource notifications (one per resource action start, completion and
failure) carry ``tenant_id``, ``user_id`` (null: a worker does not load
the stack's user), ``stack_id``, ``stack_identity``, ``stack_name``,
``resource_name``, ``resource_type``, ``physical_resource_id``,
``state``, ``state_reason``, ``create_at`` and ``updated_at``. A type
run without a lock (``side_effect_free``, e.g. OS::Heat::None) sends
only ``end``. Whether any driver is
configured is decided once per process, so with none a resource action
costs one boolean test.
"""

import json
import logging
import socket
import threading

import oslo_messaging as messaging

from heat_lite import conf
from heat_lite.common.states import Status

CONF = conf.CONF
LOG = logging.getLogger(__name__)
PUBLISHER = "orchestration"
_LOCK = threading.Lock()
_STATE = {"notifier": None, "enabled": None}


def _notifier():
    with _LOCK:
        if _STATE["notifier"] is None:
            transport = messaging.get_notification_transport(CONF)
            host = CONF.host or socket.gethostname()
            _STATE["notifier"] = messaging.Notifier(
                transport, publisher_id="%s.%s" % (PUBLISHER, host)
            )
        return _STATE["notifier"]


def cleanup():
    """Forget the notifier (tests switching configuration)."""
    with _LOCK:
        _STATE["notifier"] = None
        _STATE["enabled"] = None


def enabled():
    """Whether a notification driver is configured (cached)."""
    if _STATE["enabled"] is None:
        try:
            _STATE["enabled"] = _notifier().is_enabled()
        except Exception:  # noqa: BLE001 - never fail an operation
            LOG.exception("Could not set up notifications")
            _STATE["enabled"] = False
    return _STATE["enabled"]


def _time(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def stack_payload(stack, action, status, reason, description=None):
    """Heat's notification body for a stack row in state action_status."""
    tags = json.loads(stack["tags"]) if stack.get("tags") else None
    return {
        "tenant_id": stack["tenant"],
        "user_id": stack.get("username"),
        "stack_id": stack["id"],
        "stack_name": stack["name"],
        "stack_identity": "arn:openstack:heat::%s:stacks/%s/%s"
        % (stack["tenant"], stack["name"], stack["id"]),
        "state": "%s_%s" % (action, status),
        "state_reason": reason,
        "create_at": _time(stack.get("created_at")),
        "updated_at": _time(stack.get("updated_at")),
        "tags": tags,
        "description": description,
    }


def stack_event(stack, action, phase, status=None, reason=None):
    """Send ``orchestration.stack.<action>.<phase>`` for a stack row.

    :param phase: ``start``, ``end`` or ``error`` (the last at ERROR
        priority).
    """
    status = (
        status
        or {
            "start": Status.IN_PROGRESS,
            "end": Status.COMPLETE,
            "error": Status.FAILED,
        }[phase]
    )
    reason = reason or "Stack %s %s" % (
        action,
        {
            "start": "started",
            "end": "completed successfully",
            "error": "failed",
        }[phase],
    )
    if not enabled():
        return
    _send(
        "stack",
        action,
        phase,
        lambda: stack_payload(stack, action, status, reason),
        stack.get("id"),
    )


def stack_drifted(stack, reason, counts):
    """Send ``orchestration.stack.drift.drifted`` for a stack row."""
    if not enabled():
        return

    def payload():
        body = stack_payload(stack, stack["action"], stack["status"], reason)
        body.update(drift_status="DRIFTED", drift_counts=counts)
        return body

    _send("stack", "drift", "drifted", payload, stack.get("id"))


def _send(kind, action, phase, make_payload, what):
    """Send ``orchestration.<kind>.<action>.<phase>`` (``error`` at
    ERROR priority); log, never raise, if that fails."""
    try:
        payload = make_payload()
        ctxt = {
            "project_id": payload["tenant_id"],
            "user_id": payload["user_id"],
        }
        event_type = "%s.%s.%s.%s" % (PUBLISHER, kind, action.lower(), phase)
        notifier = _notifier()
        if phase == "error":
            notifier.error(ctxt, event_type, payload)
        else:
            notifier.info(ctxt, event_type, payload)
    except Exception:  # noqa: BLE001 - a notification never fails a stack
        LOG.exception("Could not send a notification for %s %s", kind, what)


def resource_payload(record, action, status, reason, physical_id=None):
    """The body of a resource notification for a record dict (as the
    engine loads it, with ``stack_name`` and ``stack_tenant``)."""
    tenant = record.get("stack_tenant")
    name = record.get("stack_name")
    return {
        "tenant_id": tenant,
        "user_id": None,
        "stack_id": record["stack_id"],
        "stack_name": name,
        "stack_identity": "arn:openstack:heat::%s:stacks/%s/%s"
        % (tenant, name, record["stack_id"]),
        "resource_name": record["name"],
        "resource_type": record["type"],
        "physical_resource_id": physical_id
        or record.get("physical_resource_id")
        or "",
        "state": "%s_%s" % (action, status),
        "state_reason": reason,
        "create_at": _time(record.get("created_at")),
        "updated_at": _time(record.get("updated_at")),
    }


def resource_event(
    record, action, phase, reason="state changed", physical_id=None
):
    """Send ``orchestration.resource.<action>.<phase>`` for a record;
    nothing at all (not even a payload) without a driver."""
    if not enabled():
        return
    status = {
        "start": Status.IN_PROGRESS,
        "end": Status.COMPLETE,
        "error": Status.FAILED,
    }[phase]
    _send(
        "resource",
        action,
        phase,
        lambda: resource_payload(record, action, status, reason, physical_id),
        record.get("id"),
    )
