"""The drift inputs of an update's start (``drift.revert`` decides):
the entries a ``revert_drift`` update reverts (given to the planner)
and the events every update writes about the drift it finds (``DRIFT
KEPT``: "Drift of X left in place"; ``DRIFT REVERTING``), in the
transaction that starts it. Costs one read (the report) when the stack
has no drift, and one more (its records) when it has.
"""

import json

from heat_lite.common import exception
from heat_lite.db import drift as db_drift
from heat_lite.db import events as db_events
from heat_lite.engine import definitions
from heat_lite.engine.drift import compare, revert
from heat_lite.engine.endpoint import preview

# Statuses of the ``DRIFT`` resource events an update writes.
KEPT = "KEPT"
REVERTING = "REVERTING"


def stored_properties(record):
    return json.loads(record["properties_data"] or "{}")


def _messages(shown):
    """[(event status, reason)] of one resource's ``revert.section``."""
    if shown["status"] == compare.DELETED:
        if shown["action"] == revert.RECREATE:
            return [(REVERTING, "Deleted outside the stack: re-created")]
        return [
            (
                KEPT,
                "Drift left in place: deleted outside the stack "
                "(revert_drift not set)",
            )
        ]
    names = {}
    for prop in shown["properties"]:
        names.setdefault(prop["action"], []).append(prop["name"])
    found = []
    if names.get(revert.KEEP) or not shown["properties"]:
        kept = names.get(revert.KEEP) or ["its nested stack"]
        found.append((KEPT, "Drift of %s left in place" % ", ".join(kept)))
    if names.get(revert.REVERT):
        reverted = ", ".join(names[revert.REVERT])
        found.append((REVERTING, "Drift of %s reverted" % reverted))
    return found


def events(stack, records, sections):
    """The ``DRIFT`` events of an update's start: per drifted resource,
    what it leaves in place and what it reverts."""
    return [
        db_events.event_values(
            stack["id"],
            name,
            records[name]["physical_resource_id"],
            compare.DRIFT,
            status,
            reason,
            records[name]["type"],
        )
        for name, shown in sorted(sections.items())
        for status, reason in _messages(shown)
    ]


class Inputs:
    """What an update takes from the drift report.

    :ivar revert: {name: entry} for the planner (``record_columns``;
        None: revert nothing).
    :ivar events: the ``DRIFT`` events written with the start.
    """

    def __init__(self, revert=None, events=()):
        self.revert = revert
        self.events = list(events)


def new_properties(bound, records, services):
    """A function of a resource name: the properties the update gives
    it (None when it leaves the goal, or they cannot be resolved yet)."""
    scope = definitions.RecordScope(bound, records, services)

    def props(name):
        defn = bound.resources.get(name)
        if defn is None:
            return None
        try:
            return preview.properties(bound, defn, scope)[1]
        except exception.HeatLiteException:
            return None

    return props


def sections_of(entries, records, new_props, reverting):
    """{name: section} of the drifted entries whose record is current."""
    return {
        name: revert.section(
            entry,
            stored_properties(records[name]),
            new_props(name),
            reverting,
        )
        for name, entry in sorted(entries.items())
        if name in records
    }


def _current(stack, reverting):
    """(report_state, the report row if CURRENT else None).

    :raises DriftNotCurrent: (409) ``reverting`` without a CURRENT one.
    """
    row = db_drift.drift_get(stack["id"])
    state = revert.report_state(stack, row)
    if state["state"] == revert.CURRENT:
        return state, row
    if reverting:
        raise exception.DriftNotCurrent(
            stack_name=stack["name"], reason=state["message"]
        )
    return state, None


def preview_drift(stack, reverting):
    """(the preview's ``drift``: {state, detected_at, message,
    revert_drift}, {name: entry} of the drifted resources it shows: none
    unless the report is CURRENT)."""
    state, row = _current(stack, False)
    state["revert_drift"] = reverting
    if row is None:
        if reverting:
            state["message"] += " A revert_drift update is refused (409)."
        return state, {}
    entries = revert.drifted(row)
    state["message"] += " %d resource(s) of the stack drifted." % len(entries)
    return state, entries


def check_current(stack):
    """:raises DriftNotCurrent: (409) the stack has no CURRENT report."""
    _current(stack, True)


def update_inputs(stack, bound, reverting, services):
    """The drift ``Inputs`` of an update of ``stack`` to ``bound``.

    :raises DriftNotCurrent: (409) ``reverting`` without a CURRENT
        report.
    """
    _state, row = _current(stack, reverting)
    entries = revert.drifted(row) if row is not None else {}
    if not entries:
        return Inputs(revert={} if reverting else None)
    records = definitions.current_records(stack)
    sections = sections_of(
        entries,
        records,
        new_properties(bound, records, services),
        reverting,
    )
    return Inputs(
        revert=entries if reverting else None,
        events=events(stack, records, sections),
    )
