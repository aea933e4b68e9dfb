"""bench.stats.round2_targets: issue 18's time targets judged from a
run's records (a short throughput run is reported, never met)."""

from bench import stats


def _rec(scenario, shape, n, seconds, **extra):
    return {
        "topology": "postgresql",
        "scenario": scenario,
        "shape": shape,
        "n": n,
        "seconds": seconds,
        "status": "ok",
        "rss_kb": {"api": 900000, "engine-0": 200 * 1024},
        "extra": extra,
    }


def _throughput(seconds, rate, p99_ms):
    return _rec(
        "throughput_update",
        "flat",
        int(rate * seconds),
        seconds,
        stacks_per_second=rate,
        latency_ms={"operation": {"p50": 1, "p90": 2, "p99": p99_ms}},
    )


def test_each_target_is_judged_from_its_record():
    records = [
        _rec("create", "chain", 1000, 1.3),
        _rec("create", "flat", 10000, 13.0),
        _throughput(610, 36.0, 800),
    ]
    rows = {
        t: (m, met)
        for t, m, met in stats.round2_targets(records, "postgresql")
    }
    assert rows == {
        "chain 1000 create <= 2.5 ms per step": ("1.30 ms", True),
        "flat 10000 create <= 12 s": ("13.0 s", False),
        # The API process is not an engine.
        "flat 10000 engine RSS <= 300 MB": ("200 MB", True),
        ">= 35 updates/s for 10 minutes, p99 update <= 1 s": (
            "36.0/s for 610 s, p99 800 ms",
            True,
        ),
    }


def test_a_short_or_slow_throughput_run_is_not_met():
    for record in (
        _throughput(61, 40.0, 300),
        _throughput(600, 34.9, 300),
        _throughput(600, 40.0, 1001),
    ):
        ((_, _, met),) = stats.round2_targets([record], "postgresql")
        assert not met, record
    assert stats.round2_targets([], "postgresql") == []
