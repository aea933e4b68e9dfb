"""What an update node compares: the stored properties, and after an
in-place update cut short by a takeover, those it started from too."""

import json

from heat_lite.engine.worker import update_phase


def _record(stored, before=None):
    return {
        "properties_data": json.dumps(stored),
        "properties_before": None if before is None else json.dumps(before),
    }


def test_a_finished_record_compares_with_what_it_stored():
    base, diff = update_phase._changes(
        _record({"a": 1, "b": 2}), {"a": 1, "b": 3}
    )
    assert base == {"a": 1, "b": 2}
    assert diff == {"b"}


def test_nothing_to_do_when_the_goal_is_what_it_stored():
    assert update_phase._changes(_record({"a": 1}), {"a": 1}) == (
        {"a": 1},
        set(),
    )


def test_the_same_goal_redriven_after_a_cut_update_is_made_again():
    # It tried {"a": 2} from {"a": 1} and was cut short.
    base, diff = update_phase._changes(_record({"a": 2}, {"a": 1}), {"a": 2})
    assert base == {"a": 1}
    assert diff == {"a"}


def test_a_rollback_after_a_cut_update_undoes_what_it_tried():
    base, diff = update_phase._changes(_record({"a": 2}, {"a": 1}), {"a": 1})
    assert base == {"a": 2}
    assert diff == {"a"}


def test_a_newer_goal_after_a_cut_update_changes_both_sides():
    base, diff = update_phase._changes(
        _record({"a": 2, "b": 1}, {"a": 1, "b": 1}), {"a": 2, "b": 5}
    )
    assert base == {"a": 2, "b": 1}
    assert diff == {"a", "b"}
