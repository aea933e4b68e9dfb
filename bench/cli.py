"""``python -m bench``: parse the options, run every topology, write the
outputs (JSON, markdown, PNG) to one folder.

Sizes run in increasing order. An operation that overruns
``--op-timeout`` is recorded as a timeout, heat_lite is restarted (work
left in flight would skew later figures) and the larger sizes of that
shape are skipped: the harness gives up on sizes rather than hang.
"""

import argparse
import datetime
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench import (
    api,
    machine,
    plots,
    queries,
    report,
    rollouts,
    scenarios,
    soak,
    stats,
    throughput,
    topology,
)
from bench.results import Results

OTHER_SCENARIOS = ("throughput", "resource_group", "stack_query")
# Long runs that only run when named in --scenarios.
OPT_IN_SCENARIOS = ("soak", "rollout")
DEFAULT_SCENARIOS = scenarios.SIZE_SCENARIOS + OTHER_SCENARIOS
ALL_SCENARIOS = DEFAULT_SCENARIOS + OPT_IN_SCENARIOS
HERE = os.path.dirname(os.path.abspath(__file__))
LOG = logging.getLogger("bench")

# option: (full-run default, --quick value)
DEFAULTS = {
    "topology": (["all", "postgresql", "mysql"], ["all"]),
    "sizes": ("10,100,1000,10000", "10,20"),
    "concurrent_sizes": ("100,1000", "20"),
    "throughput_stacks": (100, 8),
    "throughput_threads": (16, 4),
    "throughput_seconds": (60.0, 0.0),
    "group_sizes": ("1000,100", "10,5"),
    "query_stacks": (10000, 200),
    "soak_stacks": (100, 4),
    "soak_updates": (10000, 40),
    "soak_rounds": (10, 2),
    "rollout_sizes": ("100,1000", "10"),
}
# --against-heat: Heat is slow (a flat stack of N takes N s), so fewer
# and smaller stacks; applied before DEFAULTS.
AGAINST_HEAT_DEFAULTS = {
    "sizes": ("10,100,500", "10"),
    "concurrent_sizes": ("10,100", "10"),
    "throughput_stacks": (20, 4),
    "throughput_threads": (4, 2),
    "throughput_seconds": (30.0, 0.0),
    "repeat": (3, 1),
    "op_timeout": (1200.0, 300.0),
}
AGAINST_HEAT_SCENARIOS = scenarios.SIZE_SCENARIOS + ("throughput",)


def _ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark heat_lite over its "
        "REST API in one or more topologies (see bench/README.rst).",
    )
    p.add_argument(
        "--topology",
        action="append",
        choices=sorted(topology.KINDS),
        help="all (heat-lite-all, SQLite), postgresql or mysql "
        "(API + engines over RabbitMQ); repeat for several. "
        "Default: all three (--quick: all).",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=2,
        help="engine worker processes (default 2)",
    )
    p.add_argument(
        "--sizes",
        help="stack sizes N, comma separated "
        "(default 10,100,1000,10000; --quick: 10,20)",
    )
    p.add_argument(
        "--shapes",
        default="flat,chain",
        help="flat and/or chain (default both)",
    )
    p.add_argument(
        "--scenarios",
        help="comma separated subset of: %s (default all but "
        "%s)" % (", ".join(ALL_SCENARIOS), ", ".join(OPT_IN_SCENARIOS)),
    )
    p.add_argument(
        "--full-max",
        type=int,
        default=1000,
        help="sizes above this run only the flat create and "
        "delete (default 1000)",
    )
    p.add_argument(
        "--concurrent-sizes",
        help="sizes of the concurrent update (default 100,1000)",
    )
    p.add_argument(
        "--throughput-stacks",
        type=int,
        help="K stacks of 10 resources (default 100)",
    )
    p.add_argument(
        "--throughput-threads", type=int, help="T client threads (default 16)"
    )
    p.add_argument(
        "--throughput-seconds",
        type=float,
        help="keep updating for at least this long (default 60)",
    )
    p.add_argument(
        "--group-sizes",
        help="ResourceGroup scale targets from 0 (default 1000,100)",
    )
    p.add_argument(
        "--query-stacks",
        type=int,
        help="K stacks of 10 resources the stack_query scenario seeds "
        "(default 10000; --quick: 200)",
    )
    p.add_argument(
        "--soak-stacks", type=int, help="soak: K stacks (default 100)"
    )
    p.add_argument(
        "--soak-updates", type=int, help="soak: updates in all (default 10000)"
    )
    p.add_argument(
        "--soak-rounds",
        type=int,
        help="soak: rounds, each ended by purge_deleted (default 10)",
    )
    p.add_argument(
        "--rollout-sizes",
        help="rollout: K ten-resource stacks per rollout, powers of ten "
        "(default 100,1000; --quick: 10)",
    )
    p.add_argument(
        "--op-timeout",
        type=float,
        help="seconds one operation may take before the "
        "harness gives up on that size (default 300; --against-heat: "
        "1200)",
    )
    p.add_argument(
        "--against-heat",
        action="store_true",
        help="run the scenarios on heat_lite (PostgreSQL, RabbitMQ) "
        "and on OpenStack Heat 27 installed from PyPI into a cached "
        "venv, and write the side-by-side table (default sizes "
        "10,100,500; --quick: 10, one repetition)",
    )
    p.add_argument(
        "--startup",
        action="store_true",
        help="run nothing else: time heat-lite-all's quick start (no "
        "config, an empty HOME) five times",
    )
    p.add_argument(
        "--retention",
        action="store_true",
        help="run nothing else: image retention at the seed's scale "
        "(issue 30; --quick: a small fixture)",
    )
    p.add_argument(
        "--apps",
        action="store_true",
        help="run nothing else: app pushes against the test cloud, 100 "
        "apps at 3.5 pushes/s for 10 minutes and a burst on one branch "
        "(issue 29; --quick: 10 apps at 0.5/s for a minute)",
    )
    p.add_argument(
        "--apps-seconds",
        type=float,
        help="--apps: seconds of steady pushes (default 600; --quick: 60)",
    )
    p.add_argument(
        "--apps-kind",
        choices=("sqlite", "postgresql", "mysql"),
        help="--apps: heat-lite-all on SQLite (default) or heat-lite-api "
        "and two engine workers on PostgreSQL or MariaDB",
    )
    p.add_argument(
        "--repeat",
        type=int,
        help="--against-heat: repetitions of every scenario; the "
        "report gives the median (default 3; --quick: 1)",
    )
    p.add_argument(
        "--out", help="output folder (default bench/results/<timestamp>)"
    )
    p.add_argument(
        "--render",
        nargs="+",
        metavar="RUN_DIR",
        help="run nothing: write the tables and plots of "
        "earlier runs' results.json together into --out",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="CI mode: all-in-one only, N <= 100, a short throughput run",
    )
    return p


def parse(argv=None):
    opts = parser().parse_args(argv)
    if opts.against_heat:
        for key, (full, quick) in AGAINST_HEAT_DEFAULTS.items():
            if getattr(opts, key) is None:
                setattr(opts, key, quick if opts.quick else full)
        opts.topology = opts.topology or ["postgresql"]
        if opts.scenarios is None:
            opts.scenarios = ",".join(AGAINST_HEAT_SCENARIOS)
    if opts.op_timeout is None:
        opts.op_timeout = 300.0
    if opts.scenarios is None:
        opts.scenarios = ",".join(DEFAULT_SCENARIOS)
    for key, (full, quick) in DEFAULTS.items():
        if getattr(opts, key) is None:
            setattr(opts, key, quick if opts.quick else full)
    opts.topology = list(dict.fromkeys(opts.topology))
    for key in ("sizes", "concurrent_sizes", "group_sizes", "rollout_sizes"):
        setattr(opts, key, sorted(_ints(getattr(opts, key))))
    opts.shapes = [s for s in opts.shapes.split(",") if s]
    opts.scenarios = [s for s in opts.scenarios.split(",") if s]
    unknown = set(opts.scenarios) - set(ALL_SCENARIOS)
    if unknown or not set(opts.shapes) <= {"flat", "chain"}:
        parser().error(
            "unknown scenario or shape: %s"
            % ", ".join(sorted(unknown) or opts.shapes)
        )
    if opts.quick and max(opts.sizes) > 100 and not opts.against_heat:
        parser().error("--quick runs sizes up to 100")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    opts.out = opts.out or os.path.join(HERE, "results", stamp)
    return opts


def run_topology(name, opts, results, data, workroot):
    """Run every selected scenario on one topology; always stop it."""
    topo = topology.Topology(name, opts.workers, workroot)
    try:
        topo.start()
    except topology.Unavailable as exc:
        results.add(name, "all", "-", 0, "skipped", reason=str(exc))
        return
    except RuntimeError as exc:
        # heat_lite itself did not start: say so and go on with the
        # other topologies.
        results.add(name, "all", "-", 0, "failed", reason=str(exc)[-2000:])
        topo.logs(os.path.join(opts.out, "logs"))
        return
    try:
        _run_topology(topo, opts, results)
        data["topologies"][name] = topo.describe()
    except Exception as exc:  # noqa: BLE001 - keep the other topologies
        LOG.exception("Benchmark of %s stopped", name)
        results.add(
            name,
            "all",
            "-",
            0,
            "failed",
            reason="%s: %s" % (type(exc).__name__, exc),
        )
        data["topologies"][name] = topo.describe()
    finally:
        topo.stop()
        topo.logs(os.path.join(opts.out, "logs"))


def run_throughput(topo, opts, results):
    """The throughput scenario, if asked for (also run against Heat)."""
    if "throughput" in opts.scenarios:
        _guarded(
            topo,
            throughput.run_throughput,
            topo,
            results,
            opts.throughput_stacks,
            opts.throughput_threads,
            opts.throughput_seconds,
            opts.op_timeout,
        )


def _run_topology(topo, opts, results):
    _run_sizes(topo, opts, results)
    run_throughput(topo, opts, results)
    if "resource_group" in opts.scenarios:
        big, small = max(opts.group_sizes), min(opts.group_sizes)
        _guarded(
            topo,
            throughput.run_resource_group,
            topo,
            results,
            big,
            small,
            opts.op_timeout,
        )
    if "soak" in opts.scenarios:
        _guarded(
            topo,
            soak.run_soak,
            topo,
            results,
            opts.soak_stacks,
            opts.soak_updates,
            opts.soak_rounds,
            opts.throughput_threads,
            opts.op_timeout,
        )
    if "rollout" in opts.scenarios:
        _guarded(
            topo,
            rollouts.run_rollouts,
            topo,
            results,
            opts.rollout_sizes,
            opts.op_timeout,
        )
    if "stack_query" in opts.scenarios:
        # Last: the stacks it seeds stay in the database.
        _guarded(topo, queries.run_query, topo, results, opts.query_stacks)


def _guarded(topo, fn, *args):
    try:
        fn(*args)
    except (api.OpFailed, api.OpTimeout):
        topo.restart()


def _run_sizes(topo, opts, results):
    ctx = scenarios.Context(
        topo,
        results,
        opts.scenarios,
        opts.op_timeout,
        opts.full_max,
        opts.concurrent_sizes,
    )
    if not ctx.wanted(*scenarios.SIZE_SCENARIOS):
        return
    gave_up = {}
    for n in opts.sizes:
        for shape in opts.shapes:
            if shape in gave_up:
                results.add(
                    topo.name,
                    "all",
                    shape,
                    n,
                    "skipped",
                    reason="gave up: N=%d overran --op-timeout "
                    "%.0f s" % (gave_up[shape], opts.op_timeout),
                )
                continue
            try:
                scenarios.run_size(ctx, shape, n)
            except api.OpTimeout:
                gave_up[shape] = n
                topo.restart()
            except api.OpFailed:
                # Recorded; start afresh so that whatever the failure
                # left in flight does not weigh on the next figures.
                topo.restart()


def _git(*args):
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            cwd=HERE,
            timeout=10,
        ).stdout.strip()
    except OSError:
        return ""


def revision():
    """The heat_lite commit measured (``+local changes`` if its code
    differs from it); ``BENCH_REVISION`` names the code when the run is
    made from an exported tree rather than a git checkout."""
    rev = os.environ.get("BENCH_REVISION")
    if not rev:
        rev = _git("rev-parse", "--short", "HEAD") or "unknown"
        # ":/" names the path from the top of the tree (git runs in bench/).
        if _git("status", "--porcelain", "--", ":/heat_lite"):
            rev += "+local changes"
    return rev


def _meta(opts, started):

    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return {
        "started": started,
        "argv": sys.argv[1:],
        "quick": opts.quick,
        "workers": opts.workers,
        "sizes": opts.sizes,
        "shapes": opts.shapes,
        "scenarios": opts.scenarios,
        "op_timeout_s": opts.op_timeout,
        "revision": revision(),
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20),
        "python": sys.version.split()[0],
        "machine": machine.describe(),
    }


def render(opts):
    """Merge earlier runs (e.g. one per topology) into one report."""
    data = {"topologies": {}, "records": []}
    for run_dir in opts.render:
        with open(os.path.join(run_dir, "results.json")) as f:
            run = json.load(f)
        if run.get("meta", {}).get("mode") == "against-heat":
            raise SystemExit(
                "%s is an --against-heat run: render it with "
                "python -m bench --against-heat --render %s --out DIR"
                % (run_dir, run_dir)
            )
        data.setdefault("meta", run["meta"])
        data["meta"].setdefault("merged_from", []).append(run_dir)
        data["topologies"].update(run["topologies"])
        data["records"].extend(run["records"])
    os.makedirs(opts.out, exist_ok=True)
    results = Results()
    results.records = data.pop("records")
    _write(opts, data, results, data["meta"]["elapsed_s"])
    return 0


def main(argv=None):
    opts = parse(argv)
    if opts.startup:
        from bench import startup

        return startup.main(opts)
    if opts.retention:
        from bench import retention

        return retention.main(opts)
    if opts.apps:
        from bench import apps

        return apps.main(opts)
    if opts.against_heat:
        from bench import against_heat

        if opts.render:
            return against_heat.render(opts.render[0], opts.out)
        return against_heat.main(opts)
    if opts.render:
        return render(opts)
    os.makedirs(os.path.join(opts.out, "logs"), exist_ok=True)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    data = {"meta": _meta(opts, started), "topologies": {}}
    results = Results(echo=lambda line: print(line, flush=True))
    workroot = tempfile.mkdtemp(prefix="heat-lite-bench-")
    clock = time.monotonic()
    try:
        for name in opts.topology:
            run_topology(name, opts, results, data, workroot)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
        data["meta"]["load_average_at_end"] = machine.load_average()
        _write(opts, data, results, time.monotonic() - clock)
    failed = results.find(status="failed")
    return 1 if failed else 0


def _write(opts, data, results, elapsed):
    data["meta"]["elapsed_s"] = round(elapsed, 1)
    data["meta"].setdefault(
        "load_average_end", [round(x, 2) for x in os.getloadavg()]
    )
    data["records"] = results.records
    data["fits"] = stats.fits(results.records)
    if plots.available():
        data["plots"] = plots.write_all(
            results.records,
            list(data["topologies"]),
            opts.out,
            caption=machine.caption(data["meta"]),
        )
    else:
        data["plots"] = []
        data["meta"]["plots_skipped"] = (
            "matplotlib is not installed (pip install .[bench])"
        )
    report.write_json(opts.out, data)
    report.write_markdown(opts.out, data)
    print("results: %s" % opts.out)
