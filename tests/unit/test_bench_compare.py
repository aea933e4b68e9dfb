"""The pieces of ``python -m bench --against-heat`` that need no Heat:
the pinned version, the options, and the side-by-side rows."""

import json

import pytest

from bench import cli, compare_report, heat_venv


def test_heat_27_is_pinned():
    assert heat_venv.pinned_version("openstack-heat").startswith("27.")
    assert heat_venv.pinned_version("python-heatclient")
    # The cache is keyed by the constraints file's content.
    assert heat_venv.constraints_hash() in heat_venv.venv_dir()


def test_quick_against_heat_options():
    opts = cli.parse(["--against-heat", "--quick", "--out", "/tmp/x"])
    assert opts.sizes == [10] and opts.repeat == 1
    assert "throughput" in opts.scenarios
    full = cli.parse(["--against-heat", "--out", "/tmp/x"])
    assert full.sizes == [10, 100, 500] and full.repeat == 3
    # The ordinary bench keeps its own defaults.
    plain = cli.parse(["--quick", "--out", "/tmp/x"])
    assert plain.sizes == [10, 20] and plain.op_timeout == 300.0


def _rec(target, scenario, seconds, cpu, n=10, **extra):
    return {
        "topology": target,
        "scenario": scenario,
        "shape": "flat",
        "n": n,
        "status": "ok",
        "seconds": seconds,
        "resources": n,
        "costs": {"raw": {"cpu_ms_engine": cpu}},
        "extra": extra,
    }


def test_rows_take_medians_and_ratios():
    records = [
        _rec("heat_lite", "create", 0.1, 20),
        _rec("heat_lite", "create", 0.3, 40),
        _rec("heat_lite", "create", 0.2, 30),
        _rec("heat", "create", 9.0, 1000),
        _rec("heat_lite", "throughput_update", 1, 1, stacks_per_second=10),
        _rec("heat", "throughput_update", 1, 1, stacks_per_second=0.5),
        dict(_rec("heat", "delete", 1, 1), status="failed"),
    ]
    rows = {(r["scenario"], r["n"]): r for r in compare_report.rows(records)}
    create = rows["create", 10]
    assert create["heat_lite"] == 0.2 and create["heat"] == 9.0
    assert create["ratio"] == 45.0
    assert create["heat_lite_cpu_ms_res"] == 3.0
    assert create["heat_lite_reps"] == 3 and create["heat_reps"] == 1
    # Throughput: the ratio is heat_lite's rate over Heat's.
    assert rows["throughput_update", "-"]["ratio"] == 20.0
    assert ("delete", 10) not in rows


def test_slopes_of_both_targets():
    records = [
        _rec("heat_lite", "create", 0.1, 1, n=10),
        _rec("heat_lite", "create", 1.0, 1, n=100),
        _rec("heat", "create", 9.0, 1, n=10),
        _rec("heat", "create", 900.0, 1, n=100),
    ]
    [row] = compare_report._slope_rows(compare_report.rows(records))
    assert row == ["create", "flat", "10,100", "1.00", "2.00"]


def test_an_against_heat_run_is_not_merged_as_a_plain_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(
        json.dumps({"meta": {"mode": "against-heat"}, "records": []})
    )
    with pytest.raises(SystemExit) as caught:
        cli.main(["--render", str(run), "--out", str(tmp_path / "out")])
    assert "--against-heat --render" in str(caught.value)
