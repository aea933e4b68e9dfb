"""The pure parts of deployments: input substitution into a structured
config, and how an agent's signal decides a deployment's outcome."""

import pytest

from heat_lite.common import exception
from heat_lite.engine.endpoint import software_deployments
from heat_lite.resources import structured_config


def test_substitute_replaces_only_whole_single_key_maps():
    inputs = {"a": 1, "b": [2]}
    snippet = {
        "x": {"get_input": "a"},
        "y": [{"get_input": "b"}, "get_input", {"get_input": 5}],
        "z": {"get_input": "a", "more": True},
        "w": {"get_input": "unknown"},
    }
    assert structured_config.substitute(snippet, inputs) == {
        "x": 1,
        "y": [[2], "get_input", {"get_input": 5}],
        "z": {"get_input": "a", "more": True},
        "w": None,
    }


def test_substitute_with_another_key_passes_get_input_through():
    snippet = {"x": {"get_input": "a"}, "y": {"my_input": "a"}}
    assert structured_config.substitute(snippet, {"a": 1}, "my_input") == {
        "x": {"get_input": "a"},
        "y": 1,
    }


def test_substitute_strict_refuses_a_missing_input():
    with pytest.raises(exception.UserParameterMissing):
        structured_config.substitute(
            {"x": {"get_input": "gone"}}, {}, strict=True
        )


@pytest.mark.parametrize(
    "details,status,reason",
    [
        ({}, "COMPLETE", "Outputs received"),
        ({"deploy_status_code": 0}, "COMPLETE", "Outputs received"),
        ({"deploy_status_code": "0"}, "COMPLETE", "Outputs received"),
        (
            {"deploy_status_code": 3},
            "FAILED",
            "deploy_status_code : Deployment exited with non-zero status "
            "code: 3",
        ),
        ({"bad": "boom"}, "FAILED", "bad : boom"),
        ({"fine": "x"}, "COMPLETE", "Outputs received"),
    ],
)
def test_signal_outcome(details, status, reason):
    outputs = [{"name": "bad", "error_output": True}, {"name": "fine"}]
    got = software_deployments._outcome("d1", details, outputs)
    assert got[:2] == (status, reason)
