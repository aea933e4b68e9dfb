"""The suite's own machinery: the CLI runner (harness.osc) and the
durations by which the xdist scheduler orders its groups
(tests/conftest.py)."""

import io
import os
import uuid

import pytest

from harness import osc, stand_in
from tests import conftest


def test_exit_status_as_a_process_ends():
    err = io.StringIO()
    assert osc._exit_status(None, err) == 0
    assert osc._exit_status(0, err) == 0
    assert osc._exit_status(2, err) == 2
    assert err.getvalue() == ""
    assert osc._exit_status("bad input", err) == 1
    assert err.getvalue() == "bad input\n"


def test_durations_add_up_the_phases_of_a_test(tmp_path):
    path = tmp_path / "durations.txt"
    path.write_text(
        "10.50s setup    tests/a.py::test_x\n"
        "2.00s call     tests/a.py::test_x\n"
        "0.25s teardown tests/b.py::test_y[sqlite]\n"
        "# a note\n"
        "x.ys call tests/c.py::test_z\n"
    )
    assert conftest._durations(str(path)) == {
        "tests/a.py::test_x": 12.5,
        "tests/b.py::test_y[sqlite]": 0.25,
    }
    assert conftest._durations(str(tmp_path / "missing")) == {}


def test_the_durations_file_names_collected_tests():
    seconds = conftest._durations()
    assert seconds, conftest.DURATIONS
    root = os.path.dirname(os.path.dirname(conftest.__file__))
    for nodeid in seconds:
        assert os.path.exists(os.path.join(root, nodeid.split("::")[0]))


def _stack_named(name):
    """A stand-in orchestration endpoint's answer to ``stack list``: one
    stack named after the endpoint, to see which one a command reached."""
    stack = {
        "id": str(uuid.uuid4()),
        "stack_name": name,
        "stack_status": "CREATE_COMPLETE",
        "creation_time": "2026-12-04T00:00:00Z",
        "updated_time": None,
    }
    return lambda path: {"stacks": [stack]}


@pytest.fixture
def endpoints():
    with (
        stand_in.endpoint(_stack_named("first"), "/v1/p") as (first, _),
        stand_in.endpoint(_stack_named("second"), "/v1/p") as (second, _),
    ):
        yield {"first": first, "second": second}


def test_each_command_reaches_its_own_endpoint(endpoints):
    """One CLI process serves both commands (osc.run keeps it); the
    second must not reuse the orchestration client the first made."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    names = []
    for name in ("first", "second", "first"):
        result = osc.run(
            [
                "--os-auth-type",
                "none",
                "--os-endpoint",
                endpoints[name],
                "stack",
                "list",
                "-f",
                "value",
                "-c",
                "Stack Name",
            ],
            env=env,
        )
        assert result.returncode == 0, result.stderr
        names.append(result.stdout.strip())
    assert names == ["first", "second", "first"]
    assert osc._SERVER is not None and osc._SERVER.alive()
