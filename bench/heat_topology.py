"""Standalone Heat with the interface of ``bench.topology.Topology``, so
that the scenarios run on it as they run on heat_lite.

Heat writes no cost counters, so its ``measure`` reports what the kernel
knows of every Heat process: user + system CPU milliseconds of the engine
workers and of the API (``cpu_ms_engine``, ``cpu_ms_api``), and the peak
RSS (``VmHWM``) of each role. SQL statements and RPC messages are not
counted for Heat.
"""

import glob
import os
import shutil
import time

from bench import heat_service, heatclient_api
from bench.api import Tally
from bench.topology import _cpu_ms


class HeatTopology:
    """Heat started in ``workroot/heat-<generation>``, restartable."""

    def __init__(self, bin_dir, workers, workroot):
        self.name = "heat"
        self.bin_dir = bin_dir
        self.workers = workers
        self.workroot = workroot
        self.generation = 0
        self.deployment = None
        self.tally = Tally()
        self.client = None
        self.client_class = heatclient_api.HeatClientStackClient
        self.started_s = []
        self.workdirs = []

    def start(self):
        self.generation += 1
        workdir = os.path.join(self.workroot, "heat-%d" % self.generation)
        heat = heat_service.Heat(self.bin_dir, workdir, self.workers)
        self.workdirs.append(workdir)
        start = time.monotonic()
        try:
            heat.start()
        except BaseException:
            heat.stop()
            raise
        self.started_s.append(round(time.monotonic() - start, 1))
        self.deployment = heat
        self.client = self.make_client(self.tally, poll_floor=0.01)
        return self

    def stop(self):
        if self.deployment is not None:
            heat, self.deployment = self.deployment, None
            heat.stop()

    def restart(self):
        self.stop()
        self.start()

    def forget(self):
        pass

    def make_client(self, tally, poll_floor=0.1):
        return self.client_class(
            self.deployment.endpoint(), tally, poll_floor=poll_floor
        )

    def _cpu(self):
        heat = self.deployment
        return {
            "cpu_ms_engine": sum(map(_cpu_ms, heat.engine_pids())),
            "cpu_ms_api": sum(map(_cpu_ms, heat.api_pids())),
        }

    def _rss(self):
        heat = self.deployment
        return {
            "engine": max(map(_peak_rss_kb, heat.engine_pids()), default=0),
            "api": max(map(_peak_rss_kb, heat.api_pids()), default=0),
        }

    def measure(self, fn, tally=None):
        """Run ``fn()``; return (its result, the CPU it cost Heat)."""
        tally = tally or self.tally
        polls, before, start = tally.polls, self._cpu(), time.monotonic()
        try:
            result = fn()
        finally:
            after = self._cpu()
            window = time.monotonic() - start
        raw = {k: after[k] - before[k] for k in after}
        return result, {
            "raw": raw,
            "net": dict(raw),
            "window_s": window,
            "polls": tally.polls - polls,
            "rss_kb": self._rss(),
        }

    def describe(self):
        return {
            "kind": "heat",
            "workers": self.workers,
            "bin_dir": self.bin_dir,
            "start_seconds": self.started_s,
            "restarts": self.generation - 1,
            # Each generation's config and logs (removed after the run).
            "workdirs": self.workdirs,
        }

    def logs(self, out_dir):
        for path in glob.glob(os.path.join(self.workroot, "heat-*", "*.log")):
            name = "%s-%s" % (
                os.path.basename(os.path.dirname(path)),
                os.path.basename(path),
            )
            shutil.copy(path, os.path.join(out_dir, name))


def _peak_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
