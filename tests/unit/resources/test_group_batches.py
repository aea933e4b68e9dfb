"""ResourceGroup batch planning: policies, sizes and step templates."""

import pytest

from heat_lite.common import exception
from heat_lite.resources import group_batches as gb


def test_policy_defaults_and_errors():
    assert gb.policy({}, "batch_create") is None
    assert gb.policy(
        {"rolling_update": {"pause_time": "2.5"}}, "rolling_update"
    ) == {"max_batch_size": 1, "min_in_service": 0, "pause_time": 2.5}
    with pytest.raises(
        exception.StackValidationFailed, match="batch_create.max_batch_size"
    ):
        gb.policy({"batch_create": {"max_batch_size": "x"}}, "batch_create")
    for pause in (-1, "inf", "nan", "1e999"):
        # An endless (or NaN) pause would hold the update forever.
        with pytest.raises(exception.StackValidationFailed, match="pause"):
            gb.policy({"batch_create": {"pause_time": pause}}, "batch_create")


@pytest.mark.parametrize(
    "count, rules, size",
    [
        (10, None, 0),
        (10, {"max_batch_size": 4}, 4),
        (10, {"max_batch_size": 4, "min_in_service": 8}, 2),
        (10, {"max_batch_size": 4, "min_in_service": 10}, 1),
        (10, {"max_batch_size": 4, "min_in_service": 50}, 1),
        (10, {"max_batch_size": 0}, 1),
    ],
)
def test_batch_size(count, rules, size):
    assert gb.batch_size(count, rules) == size


def test_chunks():
    assert gb.chunks(["0", "1", "2"], 2) == [["0", "1"], ["2"]]
    assert gb.chunks(["0", "1"], 0) == [["0", "1"]]
    assert gb.chunks([], 2) == []


def test_step_resources_mix_new_and_old():
    old = {"0": "old0", "1": "old1", "9": "old9"}
    final = {"0": "new0", "1": "new1", "2": "new2"}
    batches = [["0"], ["1", "2"]]
    assert gb.step_resources(final, old, batches, 0) == {
        "0": "new0",
        "1": "old1",
    }
    assert gb.step_resources(final, old, batches, 1) == final
