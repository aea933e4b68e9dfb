"""``bench.apps`` on the test cloud at a tiny size (issue 29 item 6): the
signed webhooks of two apps, then a burst on a third, go through the
real chain (heat-lite-all, Glance's web-download, a Nova server per
branch, an output check) and the figures the benchmark reports add up:
every push ends DEPLOYED or SUPERSEDED, the newest push of each branch is
the one deployed, and the builds saved are the SUPERSEDED ones.

Tiny on purpose (under a minute on a quiet machine; the waits allow a CI
run's load): no direct measure of the cloud (``cloud_rounds`` 0), four
steady pushes, and a burst posted all at once, so that its first build
sees the newer pushes before it deploys.
"""

import pytest

from bench import apps
from heat_lite.common.states import BuildStatus as B

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(900),
]
SIZES = {
    "apps": 2,
    "rate": 1.0,
    "seconds": 4.0,
    "burst_pushes": 4,
    "burst_interval": 0.05,
    "cloud_rounds": 0,
    "drain_timeout": 360.0,
    "burst_timeout": 360.0,
}


def test_tiny_run_deploys_the_newest_and_counts_what_it_saved(cloud, tmp_path):
    figures = apps.run(SIZES, str(tmp_path), cloud)

    steady = figures["steady"]
    assert steady["posted"] == steady["accepted"] == 4, steady
    assert steady["builds"] == 4 and steady["all_final"], steady
    # Nothing failed, was rejected or lost: each push was deployed or
    # made moot by a newer push of its branch.
    assert set(steady["states"]) <= {B.DEPLOYED, B.SUPERSEDED}, steady
    assert steady["saved"] == steady["states"].get(B.SUPERSEDED, 0)
    assert steady["saved"] + steady["states"][B.DEPLOYED] == 4
    assert len(steady["newest_deployed"]) == 2
    assert all(steady["newest_deployed"].values()), steady
    assert 0 < steady["latency_p50_s"] <= steady["latency_p99_s"]
    assert steady["sql_per_push"] > 0 and steady["cpu_s_per_push"] > 0
    phases = steady["phases"]
    deployed = steady["states"][B.DEPLOYED]
    assert {p["builds"] for p in phases.values()} == {deployed}, phases
    assert phases["resources"]["p50_s"] > 0

    burst = figures["burst"]
    assert burst["all_final"] and burst["newest_deployed"], burst
    assert set(burst["states"]) <= {B.DEPLOYED, B.SUPERSEDED}, burst
    # Posted at once: only the newest is deployed, the three others are
    # saved (queued ones by the newer push, the first one claimed by the
    # newer push it sees before deploying).
    assert burst["deployed"] == 1 and burst["saved"] == 3, burst

    text = apps.render({"revision": "test"}, figures)
    assert "| builds per final state | DEPLOYED" in text
    assert "| cloud's own time per push, direct" in text
