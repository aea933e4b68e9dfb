"""A running heat_lite under test, and the counting of what it costs.

The processes are started by the functional tests' ``Deployment`` (the
same commands an operator runs), with ``[DEFAULT] counters_dir`` set so
that every heat_lite process writes its cost counters as JSON once a
second. An operation's cost is the sum over processes of the counters
after it minus before it, read once the files have been flushed
(``SETTLE`` seconds after the operation ends).

Two things other than the operation itself touch the counters while it
runs, and both are counted, not guessed, then subtracted:

* the service's own background work (engine heartbeats, the recovery
  watchdog), measured as a rate per second on the idle service;
* the client's status polls, each of which costs the API an RPC call and
  the engine a few SQL reads, measured per poll on a small stack.

The raw deltas are kept beside the net figures in the JSON output.
"""

import glob
import json
import os
import shutil
import time

import pytest

from bench import api
from harness.deployment import Deployment

#: topology name -> Deployment kind
KINDS = {"all": "sqlite", "postgresql": "postgresql", "mysql": "mysql"}
FLUSH_PERIOD = 1.0  # each process rewrites its counters once a second
FLUSH_WAIT = 3.0
IDLE_SECONDS = 4.0
CALIBRATION_POLLS = 40
RSS_KEY = "peak_rss_kb"

# Product defaults for the liveness options (the functional tests shorten
# them), no TestResource ledger (file I/O the product does not do), and
# limits large enough for 10,000-resource stacks.
EXTRA_CONF = """
[DEFAULT]
counters_dir = {counters}
max_template_size = 16777216
max_json_body_size = 33554432
max_resources_per_stack = -1
max_stacks_per_tenant = -1

[engine]
heartbeat_interval = 2.0
engine_life_check_timeout = 10.0
stall_timeout = 30.0
test_resource_ledger =
"""


class Unavailable(Exception):
    """A backing service (database, RabbitMQ) of the topology is down."""


class Snapshot:
    """Counters of every process at one moment, plus the CPU seconds the
    kernel charged to each process role so far (``cpu_ms_<role>``): on a
    shared machine, wall time depends on the neighbours, CPU time much
    less."""

    def __init__(self, directory, pids=None):
        self.time = time.monotonic()
        self.totals = {}
        self.rss = {}
        for role, role_pids in (pids or {}).items():
            self.totals["cpu_ms_" + role] = sum(
                _cpu_ms(pid) for pid in role_pids
            )
        for path in glob.glob(os.path.join(directory, "*.json")):
            role = os.path.basename(path).rsplit("-", 1)[0]
            try:
                with open(path) as f:
                    counts = json.load(f)
            except (OSError, ValueError):
                continue
            for key, value in counts.items():
                if key == RSS_KEY:
                    self.rss[role] = max(self.rss.get(role, 0), value)
                else:
                    self.totals[key] = self.totals.get(key, 0) + value

    def minus(self, other):
        keys = set(self.totals) | set(other.totals)
        return {
            k: self.totals.get(k, 0) - other.totals.get(k, 0) for k in keys
        }


class Topology:
    """heat_lite in one topology, restartable, with its cost meter."""

    def __init__(self, name, workers, workdir):
        self.name = name
        self.kind = KINDS[name]
        self.workers = workers if self.kind != "sqlite" else 1
        self.workdir = workdir
        self.deployment = None
        self.generation = 0
        self.tally = api.Tally()
        self.client = None
        self.idle_rate = {}
        self.per_poll = {}
        self.services = ""
        self._settled = None
        # What the harness drives heat_lite with: bench.api's requests
        # client, or python-heatclient for the comparison with Heat.
        self.client_class = api.StackClient

    # Life cycle ----------------------------------------------------------
    def start(self):
        """Start heat_lite and calibrate the meter.

        :raises Unavailable: a backing service is not reachable.
        """
        self.generation += 1
        workdir = os.path.join(
            self.workdir, "%s-%d" % (self.name, self.generation)
        )
        os.makedirs(workdir, exist_ok=True)
        self.counters_dir = os.path.join(workdir, "counters")
        dep = Deployment(
            self.kind,
            workdir,
            engine_workers=self.workers,
            extra_conf=EXTRA_CONF.format(counters=self.counters_dir),
        )
        try:
            dep.start()
        except (pytest.skip.Exception, pytest.fail.Exception) as exc:
            dep.stop()
            raise Unavailable(str(exc)) from None
        except BaseException:
            dep.stop()
            raise
        self.deployment = dep
        self.client = self.client_class(dep.endpoint(), self.tally)
        self.services = dep.manage("service", "list")
        self._calibrate()
        return self

    def stop(self):
        if self.deployment is not None:
            dep, self.deployment = self.deployment, None
            dep.stop()
            for path in glob.glob(os.path.join(dep.workdir, "*.sqlite*")):
                os.unlink(path)

    def restart(self):
        """A fresh deployment, after an operation overran its deadline
        and left work in flight that would skew later measurements."""
        self.stop()
        self.start()

    def make_client(self, tally, poll_floor=0.1):
        """Another client of the running service (one per thread)."""
        return self.client_class(
            self.deployment.endpoint(), tally, poll_floor=poll_floor
        )

    def engine_pids(self):
        dep = self.deployment
        if self.kind == "sqlite":
            return [dep.procs["all"].pid]
        return dep.engine_pids()

    # Metering ------------------------------------------------------------
    def forget(self):
        """Drop the last settled snapshot: work done outside ``measure``
        must not be charged to the next operation."""
        self._settled = None

    def _settle(self):
        """Wait until every live process has rewritten its counters file
        since now, then read them all."""
        now = time.time()
        pattern = os.path.join(self.counters_dir, "*.json")
        deadline = now + FLUSH_WAIT
        while time.time() < deadline:
            ages = [_mtime(path) for path in glob.glob(pattern)]
            # Files not rewritten for long belong to exited processes.
            live = [m for m in ages if m > now - 2 * FLUSH_PERIOD]
            if live and min(live) > now + 0.01:
                break
            time.sleep(0.05)
        self._settled = Snapshot(self.counters_dir, self._pids())
        return self._settled

    def _pids(self):
        if self.deployment is None:
            return {}
        if self.kind == "sqlite":
            return {"all": [self.deployment.procs["all"].pid]}
        return {
            "engine": self.deployment.engine_pids(),
            "api": [self.deployment.procs["api"].pid],
        }

    def measure(self, fn, tally=None):
        """Run ``fn()``; return (its result, the costs it caused).

        :param tally: the Tally of the clients ``fn`` polls with, if not
            this topology's own client.
        """
        tally = tally or self.tally
        before = self._settled or self._settle()
        polls = tally.polls
        try:
            result = fn()
        finally:
            polls = tally.polls - polls
            after = self._settle()
        return result, self._costs(before, after, polls)

    def _costs(self, before, after, polls):
        raw = after.minus(before)
        window = after.time - before.time
        net = {}
        for key, value in raw.items():
            noise = (
                self.idle_rate.get(key, 0.0) * window
                + self.per_poll.get(key, 0.0) * polls
            )
            net[key] = max(0.0, value - noise)
        return {
            "raw": raw,
            "net": net,
            "window_s": window,
            "polls": polls,
            "rss_kb": dict(after.rss),
        }

    def _calibrate(self):
        """Count the idle rate and the cost of one status poll."""
        self.idle_rate, self.per_poll = {}, {}
        before = self._settle()
        time.sleep(IDLE_SECONDS)
        after = self._settle()
        window = after.time - before.time
        self.idle_rate = {
            k: v / window for k, v in after.minus(before).items()
        }
        client = self.client
        (stack, _), _ = self.measure(
            lambda: client.create_and_wait(
                "calibrate-%d" % self.generation,
                {
                    "heat_template_version": "2018-08-31",
                    "resources": {"r0": {"type": "OS::Heat::None"}},
                },
                60,
            )
        )

        def _polls():
            for _ in range(CALIBRATION_POLLS):
                client.status(stack)

        _, costs = self.measure(_polls)
        self.per_poll = {
            k: v / CALIBRATION_POLLS for k, v in costs["net"].items()
        }
        self.measure(lambda: client.delete_and_wait(stack, 60))

    def describe(self):
        """What the JSON output records about this topology."""
        return {
            "kind": self.kind,
            "workers": self.workers,
            "idle_rate_per_s": _rounded(self.idle_rate),
            "cost_per_poll": _rounded(self.per_poll),
            "services": self.services.splitlines(),
            "restarts": self.generation - 1,
        }

    def logs(self, out_dir):
        """Copy the processes' logs of every generation to ``out_dir``."""
        for path in glob.glob(os.path.join(self.workdir, "*", "*.log")):
            name = "%s-%s" % (
                os.path.basename(os.path.dirname(path)),
                os.path.basename(path),
            )
            shutil.copy(path, os.path.join(out_dir, name))


def _cpu_ms(pid):
    """User + system CPU milliseconds of a process (0 once it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _rounded(values):
    return {k: round(v, 3) for k, v in sorted(values.items())}
