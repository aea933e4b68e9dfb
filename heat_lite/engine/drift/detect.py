"""One drift detection of a stack tree, run on a worker.

For each current record of the stack: a resource owning a nested stack
(a template resource, a ResourceGroup, ``OS::Heat::Stack``'s local kin)
is reported with its child stack's resources after it (their
``parent_resource`` is the path of names down to them) and is MODIFIED
when anything below drifted; every other COMPLETE record's plugin reads
its live state (``Resource.live_state``), compared with the properties
the record was converged to (``compare``). Records in any other state
are NOT_CHECKED with the reason.

Cost per checked resource (doc/bench/drift.md): the plugin's reads (one
GET for most cloud types, two or three for a server with ``networks``
or a Keystone user with ``groups`` and ``roles``; names resolved
through lookups cached 30 s) and no SQL of its own (a software config
or deployment: one read of its store); per stack of the tree, two reads
(its children, its records; its template is cached); per detection, the
stack row, the previous report and the report written (one commit).
When a detection finds the stack DRIFTED and the previous
report did not (or there was none), a stack event (``DRIFT DRIFTED``,
resource type ``OS::Heat::Stack``) is written and
``orchestration.stack.drift.drifted`` sent (``common.notify``).
"""

import logging

from heat_lite.common import exception, notify
from heat_lite.common.states import Action, Status
from heat_lite.db import drift as db_drift
from heat_lite.db import events as db_events
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import cloud, definitions
from heat_lite.engine.drift import compare
from heat_lite.engine.traversal import ops
from heat_lite.resources import base

LOG = logging.getLogger(__name__)
# Records in these actions have nothing live to compare.
_NOTHING_LIVE = (Action.INIT, Action.DELETE)


class Detector:
    """Runs detections with the engine's plugin ``services``."""

    def __init__(self, services):
        self.services = services

    def run(self, stack_id, detection):
        """Detect the drift of ``stack_id``'s tree and store the report
        under ``detection`` (nothing is stored if a later detection took
        the row meanwhile)."""
        try:
            stack = db_stacks.stack_get(stack_id, show_deleted=False)
            before = _last_status(stack_id)
            entries = self.stack_entries(stack, [])
        except Exception as exc:  # noqa: BLE001 - stored as the outcome
            LOG.exception("Drift detection of stack %s failed", stack_id)
            db_drift.drift_finish(
                stack_id,
                detection,
                compare.DETECTION_FAILED,
                None,
                reason="%s: %s" % (type(exc).__name__, exc),
            )
            return
        status = compare.rollup(entries)
        stored = db_drift.drift_finish(stack_id, detection, status, entries)
        if stored and status == compare.DRIFTED and before != compare.DRIFTED:
            _drifted(stack, entries)

    def stack_entries(self, stack, path):
        """The entries of ``stack``'s resources and of everything nested
        below them, in name order (each nested stack after its owner)."""
        children = {
            child["id"]: child
            for _, child in db_stacks.stack_descendants(
                [stack["id"]], max_depth=1
            )
        }
        entries = []
        records = definitions.current_records(stack)
        for name, record in sorted(records.items()):
            record = dict(
                record,
                stack_tenant=stack["tenant"],
                stack_trust=stack.get("trust_id"),
            )
            entry = {
                "resource_name": name,
                "resource_type": record["type"],
                "physical_resource_id": record["physical_resource_id"],
                "parent_resource": "/".join(path) or None,
            }
            child = children.get(record["physical_resource_id"])
            if child is not None:
                below = self.stack_entries(child, path + [name])
                status = compare.rollup(below)
                entry["drift_status"] = (
                    compare.MODIFIED
                    if status == compare.DRIFTED
                    else compare.IN_SYNC
                )
                entries.append(entry)
                entries.extend(below)
                continue
            entry.update(self.resource_result(record))
            entries.append(entry)
        return entries

    def resource_result(self, record):
        """{drift_status, properties | reason} of one record."""
        if (
            record["status"] != Status.COMPLETE
            or record["action"] in _NOTHING_LIVE
        ):
            return _not_checked(
                "resource is %s_%s" % (record["action"], record["status"])
            )
        if not record["physical_resource_id"]:
            return _not_checked("resource has no physical resource")
        plugin = definitions.plugin_for(record, self.services)
        try:
            with cloud.side().acting_as(
                self.services, stack=definitions.stack_of(record)
            ):
                live = plugin.live_state()
                expectations = plugin.live_expectations(record["action"])
        except NotImplementedError as exc:
            return _not_checked(
                str(exc) or "%s cannot read its live state" % record["type"]
            )
        except base.ResourceGone:
            return {"drift_status": compare.DELETED}
        except Exception as exc:  # noqa: BLE001 - the cloud's answer
            LOG.warning(
                "Live state of %s (%s) unavailable: %s",
                record["name"],
                record["physical_resource_id"],
                exc,
            )
            return _not_checked("live state unavailable: %s" % exc)
        found = compare.differences(
            plugin.properties,
            _template_set(record, type(plugin)),
            live,
            expectations,
        )
        if found:
            return {"drift_status": compare.MODIFIED, "properties": found}
        return {"drift_status": compare.IN_SYNC}


def _last_status(stack_id):
    """The status of the stack's last stored report (None: none)."""
    row = db_drift.drift_get(stack_id)
    return compare.rollup(row["report"]) if row and row["report"] else None


def _drifted(stack, entries):
    """The stack became DRIFTED: a stack event and a notification."""
    counts = compare.counts(entries)
    reason = "Stack drifted: %d resource(s) MODIFIED, %d DELETED" % (
        counts[compare.MODIFIED],
        counts[compare.DELETED],
    )
    db_events.event_create(
        ops.stack_event(stack, compare.DRIFT, compare.DRIFTED, reason)
    )
    notify.stack_drifted(stack, reason, counts)


def _not_checked(reason):
    return {"drift_status": compare.NOT_CHECKED, "reason": reason}


def _template_set(record, cls):
    """The properties the record's template set for it (None when its
    template cannot be read: then every stored property counts)."""
    try:
        bound = definitions.get(
            record["template_id"], definitions.stack_info(record)
        )
        defn = bound.resources.get(record["name"])
    except exception.HeatLiteException:
        return None
    if defn is None:
        return None
    return compare.template_set(
        defn.properties or {}, getattr(cls, "deprecated_properties", None)
    )
