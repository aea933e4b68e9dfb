"""The suite's own machinery: the CLI runner (harness.osc) and the
durations by which the xdist scheduler orders its groups
(tests/conftest.py)."""

import io
import os

from harness import osc
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
