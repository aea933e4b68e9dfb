"""``openstack stack plan ...``: the pure parts (a plan's fields, its
changes as one line per kind) and the server's plan vocabulary."""

from heat_lite.common import states
from heat_lite_client import plan

PLAN = {
    "id": "p1",
    "stack_name": "s",
    "status": "READY",
    "status_reason": None,
    "existing": False,
    "created_by": "alice",
    "created_at": "2026-12-05T02:00:00",
    "expires_at": "2026-12-05T03:00:00",
    "applied_at": None,
    "applied_traversal": None,
}


def test_a_listed_plan_has_its_fields_in_order_and_empties_for_none():
    fields, values = plan._show(PLAN)
    assert fields == plan.FIELDS
    assert values[:3] == ("p1", "s", "READY")
    assert values[3] == "" and values[-1] == ""
    assert values[4] is False  # a real False, not an empty cell


def test_a_shown_plan_names_its_changed_resources_by_kind():
    changes = {
        "added": [{"resource_name": "c"}],
        "updated": [{"resource_name": "a"}, {"resource_name": "b"}],
        "unchanged": [],
        "deleted": [],
        "replaced": [{"resource_name": "r"}],
    }
    fields, values = plan._show(dict(PLAN, resource_changes=changes))
    assert fields[-1] == "Resource Changes"
    column = values[-1]
    assert column.human_readable().splitlines() == [
        "replaced: r",
        "added: c",
        "updated: a, b",
    ]
    assert column.machine_readable()["updated"] == ["a", "b"]


def test_the_statuses_shown_are_the_servers():
    assert set(states.PLAN.states) == {"READY", "APPLIED", "STALE", "EXPIRED"}
