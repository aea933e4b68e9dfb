"""Drift in previews and updates (``engine.drift.revert``): whether a
report can be used, what an update does with each drifted property,
what a revert_drift update's planner writes on the drifted records, and
that the update phase's own decision then converges them."""

import datetime
import json

from heat_lite.engine import template as tmpl_mod
from heat_lite.engine.drift import revert
from heat_lite.engine.traversal import planner
from heat_lite.engine.worker import update_phase

T0 = datetime.datetime(2026, 12, 5, 3, 0, 0)


def _row(status="DRIFTED", started=1, detected=2, report=()):
    return {
        "status": status,
        "status_reason": "boom" if status == "DETECTION_FAILED" else None,
        "started_at": T0 + datetime.timedelta(seconds=started),
        "detected_at": (
            None
            if detected is None
            else T0 + datetime.timedelta(seconds=detected)
        ),
        "report": list(report),
    }


def _stack(last_op):
    return {
        "created_at": T0,
        "action_started_at": T0 + datetime.timedelta(seconds=last_op),
    }


def test_report_state():
    assert revert.report_state(_stack(0), None)["state"] == "NOT_DETECTED"
    # The first detection, still running: nothing to use yet.
    first = _row("DETECTION_IN_PROGRESS", detected=None)
    assert revert.report_state(_stack(0), first)["state"] == "NOT_DETECTED"
    failed = revert.report_state(_stack(0), _row("DETECTION_FAILED"))
    assert failed["state"] == "NOT_DETECTED"
    assert "boom" in failed["message"]
    assert revert.report_state(_stack(0), _row())["state"] == "CURRENT"
    # An operation started after the detection did: its records moved.
    stale = revert.report_state(_stack(5), _row())
    assert stale["state"] == "STALE"
    assert "detect drift again" in stale["message"]
    # A detection running now: the previous report counts from its end.
    running = _row("DETECTION_IN_PROGRESS", started=9, detected=4)
    assert revert.report_state(_stack(3), running)["state"] == "CURRENT"
    assert revert.report_state(_stack(5), running)["state"] == "STALE"


def _entry(status="MODIFIED", physical="p1", properties=None):
    entry = {
        "resource_name": "a",
        "resource_type": "OS::Nova::Server",
        "physical_resource_id": physical,
        "parent_resource": None,
        "drift_status": status,
    }
    if properties is not None:
        entry["properties"] = properties
    return entry


SERVER_DRIFT = [
    {"name": "flavor", "expected": "tiny", "actual": "small"},
    {"name": "name", "expected": "vm", "actual": "renamed"},
    {"name": "status", "expected": "ACTIVE", "actual": "SHUTOFF"},
]
STORED = {"flavor": "tiny", "name": "vm", "image": "img"}


def test_section_actions():
    entry = _entry(properties=SERVER_DRIFT)
    new = dict(STORED, name="vm2")

    def actions(reverting):
        shown = revert.section(entry, STORED, new, reverting)
        assert shown["status"] == "MODIFIED"
        return {p["name"]: p["action"] for p in shown["properties"]}

    # The template renames it: set anyway; a status is no property.
    assert actions(False) == {
        "flavor": "keep",
        "name": "update",
        "status": "keep",
    }
    assert actions(True) == {
        "flavor": "revert",
        "name": "update",
        "status": "keep",
    }
    gone = _entry("DELETED")
    assert revert.section(gone, STORED, STORED, True) == {
        "status": "DELETED",
        "action": "recreate",
    }
    assert revert.section(gone, STORED, STORED, False)["action"] == "keep"
    owner = revert.section(_entry(), {}, {}, True)
    assert owner["properties"] == [] and owner["action"] == "keep"


def _record(physical="p1", stored=STORED, status="COMPLETE", before=None):
    return {
        "id": 1,
        "name": "a",
        "template_id": 1,
        "role": "current",
        "status": status,
        "action": "CREATE",
        "version": 1,
        "requires": "[]",
        "replaces": None,
        "replaced_by": None,
        "physical_resource_id": physical,
        "properties_data": json.dumps(stored),
        "properties_before": before,
    }


def test_record_columns():
    entry = _entry(properties=SERVER_DRIFT)
    columns = revert.record_columns(_record(), entry)
    assert json.loads(columns["properties_before"]) == {
        "flavor": "small",
        "name": "renamed",
        "image": "img",
    }
    # Another physical resource, or a record that is not COMPLETE: the
    # entry no longer describes it.
    assert revert.record_columns(_record(physical="p2"), entry) == {}
    assert revert.record_columns(_record(status="FAILED"), entry) == {}
    # A property converged to another value since: not the report's.
    moved = _record(stored=dict(STORED, flavor="big", name="other"))
    assert revert.record_columns(moved, entry) == {}
    assert revert.record_columns(_record(), _entry("DELETED")) == {
        "action": "CHECK",
        "status": "FAILED",
        "status_reason": revert.GONE_REASON,
    }


def _defs():
    return tmpl_mod.parse(
        {
            "heat_template_version": "2018-08-31",
            "resources": {
                "a": {"type": "OS::Heat::None"},
                "b": {"type": "OS::Heat::None"},
            },
        }
    ).resources


def test_planner_writes_the_revert_on_chosen_records_only():
    entry = _entry(properties=SERVER_DRIFT)
    b = dict(_record(), id=2, name="b")
    plain = planner.TraversalPlanner("s", 1, _defs()).choose([_record(), b])
    assert plain.updates == {}
    reverting = planner.TraversalPlanner(
        "s", 1, _defs(), revert={"a": entry}
    ).choose([_record(), b])
    assert set(reverting.updates) == {1}
    assert json.loads(reverting.updates[1]["properties_before"])["flavor"] == (
        "small"
    )


def test_update_phase_diff_includes_the_drifted_properties():
    """The worker's own rule (``update_phase._changes``) on a record the
    planner marked: the template did not change, yet the drifted
    properties are in the diff, taken from their live values."""
    record = revert.as_live(_record(), _entry(properties=SERVER_DRIFT))
    record["properties_data"] = json.dumps(STORED)
    old, diff = update_phase._changes(record, dict(STORED))
    assert diff == {"flavor", "name"}
    assert (old["flavor"], old["name"]) == ("small", "renamed")
    # With a template change too: both in the diff.
    old, diff = update_phase._changes(record, dict(STORED, image="img2"))
    assert diff == {"flavor", "name", "image"}
    # Without the revert: only the template's change.
    _, diff = update_phase._changes(_record(), dict(STORED, image="img2"))
    assert diff == {"image"}
