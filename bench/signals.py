"""What signals cost heat_lite (issue 26 item 2).

``python -m bench.signals [--kind postgresql] [--kind sqlite] [--out
doc/bench/signals]`` starts heat_lite (``heat-lite-api`` + one
``heat-lite-engine`` worker on PostgreSQL and RabbitMQ, or
``heat-lite-all`` on SQLite), creates a stack whose WaitCondition waits
on a WaitConditionHandle (so the condition polls the handle the whole
time, as it does while servers boot) and sends, over the REST API:

* ``large``: ``--large-count`` signals of ``--large-size`` bytes of
  ``data`` (distinct ids), the abuse of the issue: the RSS of the API and
  of the engine, the database size and the latency of a stack read
  before and after, and the HTTP code of each signal;
* ``many``: ``--many-count`` signals of ``--many-size`` bytes (distinct
  ids) to a second handle: the latency of the first and the last ten
  (a signal that rewrites every signal stored so far grows slower as
  they pile up; one stored on its own does not), and the database
  growth per signal.

The figures are written as ``results.json`` and ``results.md`` under
``--out``. The machine is shared: seconds are upper bounds, the load
average is recorded with them.
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import tempfile
import time
import types

import requests

from bench import machine, soak, topology
from harness.deployment import Deployment

TIMEOUT = 300


def _template(count):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "count": count,
                    "timeout": 3600,
                },
            },
        },
        # Outputs as a template that waits for servers has them: a stack
        # show resolves them from the stored records.
        "outputs": {
            "curl": {"value": {"get_attr": ["handle", "curl_cli"]}},
            "data": {"value": {"get_attr": ["wait", "data"]}},
        },
    }


def _rss_mb(pids):
    """The largest VmRSS of ``pids``, in MB."""
    best = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        best = max(best, int(line.split()[1]))
        except OSError:
            continue
    return round(best / 1024.0, 1)


class Run:
    """One deployment and the client that drives it."""

    def __init__(self, kind, workdir):
        extra = "[DEFAULT]\nmax_json_body_size = 2097152\n"
        self.kind = kind
        self.dep = Deployment(
            kind, workdir, engine_workers=1, extra_conf=extra
        )
        self.http = requests.Session()
        self.http.headers.update(
            {"X-Auth-User": "bench", "Content-Type": "application/json"}
        )

    def start(self):
        self.dep.start()
        self.base = self.dep.endpoint()
        return self

    def stop(self):
        self.dep.stop()

    def roles(self):
        """{role: [pid]} whose RSS is reported."""
        if self.kind == "sqlite":
            return {"all": [self.dep.procs["all"].pid]}
        return {
            "api": [self.dep.procs["api"].pid],
            # One worker runs in the engine's own process.
            "engine": [self.dep.procs["engine"].pid] + self.dep.engine_pids(),
        }

    def cpu_ms(self):
        """CPU milliseconds heat_lite's processes spent so far."""
        return sum(
            topology._cpu_ms(pid)
            for pids in self.roles().values()
            for pid in pids
        )

    def rss(self):
        return {role: _rss_mb(pids) for role, pids in self.roles().items()}

    def db_bytes(self):
        return soak.db_size(
            types.SimpleNamespace(kind=self.kind, deployment=self.dep)
        )

    def create(self, name, count):
        resp = self.http.post(
            self.base + "/stacks",
            json={"stack_name": name, "template": _template(count)},
            timeout=TIMEOUT,
        )
        resp.raise_for_status()
        stack = (name, resp.json()["stack"]["id"])
        self._wait_waiting(stack)
        return stack

    def _wait_waiting(self, stack):
        url = self.base + "/stacks/%s/%s/resources/wait" % stack
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            resp = self.http.get(url, timeout=TIMEOUT)
            status = (
                resp.json()["resource"]["resource_status"] if resp.ok else ""
            )
            if status.endswith("IN_PROGRESS"):
                return
            time.sleep(0.2)
        raise RuntimeError("the wait condition of %s never started" % stack[0])

    def signal(self, stack, ident, size):
        """POST one signal; return (HTTP code, seconds)."""
        # Random text: a database that compresses (PostgreSQL's TOAST)
        # would store a run of one letter in a few bytes.
        data = secrets.token_urlsafe(size)[:size]
        body = {"id": ident, "reason": "bench", "data": data}
        url = self.base + "/stacks/%s/%s/resources/handle/signal" % stack
        start = time.monotonic()
        resp = self.http.post(url, data=json.dumps(body), timeout=TIMEOUT)
        return resp.status_code, time.monotonic() - start

    def read_seconds(self, stack, times=5):
        """Median seconds of a stack show (outputs resolved)."""
        url = self.base + "/stacks/%s/%s" % stack
        seconds = []
        for _ in range(times):
            start = time.monotonic()
            self.http.get(url, timeout=TIMEOUT).raise_for_status()
            seconds.append(time.monotonic() - start)
        return round(statistics.median(seconds), 4)

    def state(self, stack):
        return {
            "rss_mb": self.rss(),
            "db_bytes": self.db_bytes(),
            "stack_read_s": self.read_seconds(stack),
        }


def large(run, count, size):
    """The issue's abuse: ``count`` signals of ``size`` bytes."""
    stack = run.create("large", count + 5)
    before = run.state(stack)
    codes, seconds = [], []
    for i in range(count):
        code, took = run.signal(stack, "s%d" % i, size)
        codes.append(code)
        seconds.append(round(took, 4))
    after = run.state(stack)
    return {
        "count": count,
        "size": size,
        "codes": codes,
        "signal_s": seconds,
        "before": before,
        "after": after,
        "load_average": machine.load_average(),
    }


def many(run, count, size):
    """``count`` small signals: does the cost of one grow with those
    stored before it?"""
    stack = run.create("many", count + 5)
    db_before = run.db_bytes()
    codes, seconds, cpu = [], [], []
    for i in range(count):
        spent = run.cpu_ms()
        code, took = run.signal(stack, "m%d" % i, size)
        cpu.append(run.cpu_ms() - spent)
        codes.append(code)
        seconds.append(took)
    db_after = run.db_bytes()
    accepted = sum(1 for c in codes if c == 200)
    tenth = max(count // 10, 1)
    return {
        "count": count,
        "size": size,
        "accepted": accepted,
        "first10_median_s": round(statistics.median(seconds[:10]), 4),
        "last10_median_s": round(statistics.median(seconds[-10:]), 4),
        # CPU of heat_lite's processes while a signal is stored (its
        # wait condition's polls included), per signal: the first and
        # the last tenth of them.
        "first_tenth_cpu_ms": round(statistics.mean(cpu[:tenth]), 1),
        "last_tenth_cpu_ms": round(statistics.mean(cpu[-tenth:]), 1),
        "db_growth_bytes": db_after - db_before,
        "db_bytes_per_signal": round(
            (db_after - db_before) / max(accepted, 1)
        ),
        "stack_read_s": run.read_seconds(stack),
        "load_average": machine.load_average(),
    }


def _revision():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("BENCH_REVISION", "unknown")


def run_kind(kind, opts):
    with tempfile.TemporaryDirectory() as workdir:
        run = Run(kind, workdir).start()
        try:
            return {
                "large": large(run, opts.large_count, opts.large_size),
                "many": many(run, opts.many_count, opts.many_size),
            }
        finally:
            run.stop()


def markdown(results):
    meta = results["meta"]
    lines = [
        "# Signals at %s (%s)" % (meta["revision"], meta["label"]),
        "",
        machine.caption(meta),
        "",
        "| kind | phase | RSS MB before | RSS MB after | DB MB growth "
        "| stack read s before / after | HTTP codes |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, res in results["kinds"].items():
        big = res["large"]
        codes = sorted(set(big["codes"]))
        lines.append(
            "| %s | %d x %d B | %s | %s | %.1f | %s / %s | %s |"
            % (
                kind,
                big["count"],
                big["size"],
                big["before"]["rss_mb"],
                big["after"]["rss_mb"],
                (big["after"]["db_bytes"] - big["before"]["db_bytes"]) / 1e6,
                big["before"]["stack_read_s"],
                big["after"]["stack_read_s"],
                ", ".join(str(c) for c in codes),
            )
        )
    lines += [
        "",
        "| kind | signals x bytes | accepted | first 10 median s "
        "| last 10 median s | CPU ms a signal, first / last tenth "
        "| DB bytes per signal | stack read s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, res in results["kinds"].items():
        few = res["many"]
        lines.append(
            "| %s | %d x %d | %d | %s | %s | %s / %s | %s | %s |"
            % (
                kind,
                few["count"],
                few["size"],
                few["accepted"],
                few["first10_median_s"],
                few["last10_median_s"],
                few["first_tenth_cpu_ms"],
                few["last_tenth_cpu_ms"],
                few["db_bytes_per_signal"],
                few["stack_read_s"],
            )
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--kind", action="append", choices=("postgresql", "sqlite", "mysql")
    )
    parser.add_argument("--large-count", type=int, default=20)
    parser.add_argument("--large-size", type=int, default=900_000)
    parser.add_argument("--many-count", type=int, default=300)
    parser.add_argument("--many-size", type=int, default=4000)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="bench/results/signals")
    opts = parser.parse_args(argv)
    meta = {
        "machine": machine.describe(),
        "revision": _revision(),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "label": opts.label,
    }
    results = {"meta": meta, "kinds": {}}
    for kind in opts.kind or ["postgresql"]:
        results["kinds"][kind] = run_kind(kind, opts)
    meta["load_average_at_end"] = machine.load_average()
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    with open(os.path.join(opts.out, "results.md"), "w") as f:
        f.write(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
