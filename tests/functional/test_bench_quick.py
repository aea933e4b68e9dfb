"""The benchmark harness's quick mode runs end to end, so it never rots.

It runs ``python -m bench --quick`` as CI and ``tox -e bench`` do, then
checks that every output is there and that every quick scenario was
measured with positive counts. It asserts nothing about time: CI
machines are too noisy for that, and the bench's figures are read, not
gated.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
SIZE_SCENARIOS = (
    "create",
    "update_inplace",
    "update_half",
    "update_replace",
    "delete",
)
THROUGHPUT = ("throughput_create", "throughput_update", "throughput_delete")
COUNTED = ("sql_statements", "sql_commits", "events")

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, (
        result.stdout[-5000:] + result.stderr[-5000:]
    )
    with open(out / "results.json") as f:
        return out, json.load(f)


def _ok(data, scenario, shape=None):
    return [
        r
        for r in data["records"]
        if r["scenario"] == scenario
        and r["status"] == "ok"
        and shape in (None, r["shape"])
    ]


def test_every_quick_scenario_is_measured(quick_run):
    _, data = quick_run
    sizes = data["meta"]["sizes"]
    assert max(sizes) <= 100
    for shape in ("flat", "chain"):
        for scenario in SIZE_SCENARIOS:
            recs = _ok(data, scenario, shape)
            assert sorted(r["n"] for r in recs) == sizes, (scenario, shape)
            for rec in recs:
                assert rec["seconds"] > 0
                for key in COUNTED:
                    assert rec["per_resource"][key] > 0, (scenario, key)
                assert rec["rss_kb"]["all"] > 0
        [concurrent] = _ok(data, "concurrent_update", shape)
        assert concurrent["extra"]["alone_seconds"] > 0
        assert concurrent["extra"]["converged"] is True
    for scenario in THROUGHPUT:
        [rec] = _ok(data, scenario)
        assert rec["extra"]["stacks_per_second"] > 0
        assert rec["per_resource"]["sql_statements"] > 0
        assert rec["extra"]["latency_ms"]["GET"]["count"] > 0


def test_resource_group_is_measured_or_said_unavailable(quick_run):
    _, data = quick_run
    recs = [r for r in data["records"] if r["scenario"] == "resource_group"]
    assert recs
    if any(r["status"] == "skipped" for r in recs):
        assert "not available" in recs[0]["reason"]
    else:
        assert {r["shape"] for r in _ok(data, "resource_group")} == {
            "scale_up",
            "scale_down",
        }


def test_markdown_and_fits(quick_run):
    out, data = quick_run
    with open(out / "results.md") as f:
        text = f.read()
    for scenario in SIZE_SCENARIOS + (
        "concurrent_update",
        "## Throughput",
        "## Targets",
    ):
        assert scenario in text
    slopes = {(f["scenario"], f["shape"]): f["slope"] for f in data["fits"]}
    assert slopes["create", "flat"] is not None
    assert slopes["create", "chain"] is not None


def test_plots(quick_run):
    out, data = quick_run
    if importlib.util.find_spec("matplotlib") is None:
        # Without the bench extra the run says so instead of plotting.
        assert "matplotlib" in data["meta"]["plots_skipped"]
        return
    assert set(data["plots"]) == {"time_all.png", "cost_per_resource.png"}
    for name in data["plots"]:
        with open(out / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
