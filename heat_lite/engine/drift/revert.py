"""Drift in previews and updates (issue 32 item 2).

The stack's last drift report (``db.drift``, written by ``detect``) is an
input of an update and of its preview:

- ``report_state``: whether the report can be used. It is CURRENT when
  the detection started after the stack's last operation started (a
  detection never runs while one does), STALE when an operation started
  since (its records may have moved), NOT_DETECTED when there is none
  (or the last detection failed, or is the first and still running).
- ``section``: what an update does with one drifted resource, property
  by property: ``revert`` (``revert_drift`` set: put back to the
  template's value), ``update`` (the update sets the property to a new
  template value anyway), ``keep`` (left as the cloud has it; also
  every observed value that is no property, such as a server's status:
  no update can set it); a DELETED resource is ``recreate``d or kept.
- ``record_columns``: what the start of a ``revert_drift`` update writes
  on a drifted record, in the transaction that plans the traversal
  (``planner.TraversalPlanner``), so that the update phase's own
  decision (``worker.update_phase``) converges it: a MODIFIED record's
  ``properties_before`` holds the live values of its drifted properties
  (the resource is "somewhere between", exactly what that column says
  of an interrupted update), so they are in the node's diff and the
  plugin updates them in place, or replaces the resource where it
  cannot (``needs_replace``, as for any change); a DELETED record
  becomes CHECK_FAILED, so the node replaces it (``needs_replace_failed``,
  as after Heat's ``stack check`` found it gone).

``inputs`` reads the report and the records for an update's start.

Only the top-level stack's resources are reverted: a resource owning a
nested stack whose members drifted is shown MODIFIED with no properties
and kept (its child's update is not given the report).
"""

import json

from heat_lite.common.states import Action, Status
from heat_lite.engine.drift import compare

CURRENT = "CURRENT"
STALE = "STALE"
NOT_DETECTED = "NOT_DETECTED"
REVERT = "revert"
UPDATE = "update"
KEEP = "keep"
RECREATE = "recreate"
GONE_REASON = "Drift: deleted outside the stack; re-created by revert_drift"


def _when(value):
    return value.isoformat() if value is not None else None


def report_state(stack, row):
    """{state, detected_at, message} of the stack's report ``row``
    (``db.drift.drift_get``; None: never detected)."""
    if row is None or row["detected_at"] is None:
        return {
            "state": NOT_DETECTED,
            "detected_at": None,
            "message": "No drift detection has run on this stack.",
        }
    if row["status"] == compare.DETECTION_FAILED:
        return {
            "state": NOT_DETECTED,
            "detected_at": _when(row["detected_at"]),
            "message": "The last drift detection failed: %s"
            % row["status_reason"],
        }
    running = row["status"] == compare.DETECTION_IN_PROGRESS
    # The report of a detection still running is the previous one's, of
    # which only the end is known.
    since = row["detected_at"] if running else row["started_at"]
    last = stack.get("action_started_at") or stack.get("created_at")
    if last is not None and since < last:
        return {
            "state": STALE,
            "detected_at": _when(row["detected_at"]),
            "message": "The last drift detection (%s) is older than the "
            "stack's last operation (%s): detect drift again."
            % (_when(row["detected_at"]), _when(last)),
        }
    return {
        "state": CURRENT,
        "detected_at": _when(row["detected_at"]),
        "message": "Drift detected at %s." % _when(row["detected_at"]),
    }


def drifted(row):
    """{resource name: entry} of the top-level stack's MODIFIED and
    DELETED resources in ``row``'s report."""
    return {
        e["resource_name"]: e
        for e in row["report"]
        if not e.get("parent_resource")
        and e["drift_status"] in (compare.MODIFIED, compare.DELETED)
    }


def section(entry, stored, new_props, reverting):
    """The preview's ``drift`` of one resource.

    :param entry: its entry in the report.
    :param stored: the properties its record was converged to.
    :param new_props: the properties the update gives it (None: the
        update deletes it).
    :param reverting: ``revert_drift`` is set.
    """
    if entry["drift_status"] == compare.DELETED:
        return {
            "status": compare.DELETED,
            "action": RECREATE if reverting else KEEP,
        }
    found = []
    for prop in entry.get("properties") or ():
        name = prop["name"]
        if name not in stored:
            action = KEEP  # observed, not a property: no update sets it
        elif new_props is not None and not compare.same(
            new_props.get(name), prop["expected"]
        ):
            action = UPDATE
        else:
            action = REVERT if reverting else KEEP
        found.append(dict(prop, action=action))
    result = {"status": compare.MODIFIED, "properties": found}
    if "properties" not in entry:
        result["action"] = KEEP
        result["reason"] = "drift inside its nested stack is not reverted"
    return result


def record_columns(record, entry):
    """Column values that make a ``revert_drift`` update converge
    ``record`` back onto its goal (see the module docstring); {} when
    the entry no longer describes the record (another physical
    resource, or a property converged to another value since)."""
    if (
        record["physical_resource_id"] != entry.get("physical_resource_id")
        or record["status"] != Status.COMPLETE
        or record["action"] in (Action.INIT, Action.DELETE)
    ):
        return {}
    if entry["drift_status"] == compare.DELETED:
        return {
            "action": Action.CHECK,
            "status": Status.FAILED,
            "status_reason": GONE_REASON,
        }
    stored = json.loads(record["properties_data"] or "{}")
    before = (
        json.loads(record["properties_before"])
        if record.get("properties_before")
        else dict(stored)
    )
    live = {
        p["name"]: p["actual"]
        for p in entry.get("properties") or ()
        if p["name"] in stored
        and compare.same(stored[p["name"]], p["expected"])
    }
    if not live:
        return {}
    before.update(live)
    return {"properties_before": json.dumps(before)}


def as_live(record, entry):
    """``record`` as a ``revert_drift`` update's node takes it (the
    preview's decision): its drifted properties at their live values, a
    deleted one failed."""
    columns = record_columns(record, entry)
    live = dict(record, **columns)
    if columns.get("properties_before"):
        live["properties_data"] = columns["properties_before"]
    return live
