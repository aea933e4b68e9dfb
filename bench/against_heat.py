"""``python -m bench --against-heat``: the same scenarios on heat_lite and
on OpenStack Heat 27, in one run, on the same PostgreSQL and RabbitMQ.

* heat_lite: ``heat-lite-api`` + ``heat-lite-engine --workers N``
  (``bench.topology``, the ``postgresql`` topology);
* Heat: heat-api (gunicorn) + heat-engine with ``num_engine_workers =
  N``, convergence, noauth (``bench.heat_service``), installed from PyPI
  into a cached venv of its own (``bench.heat_venv``).

Both are driven by python-heatclient (``bench.heatclient_api``) over the
Heat API v1, one after the other (heat_lite first), each scenario
repeated ``--repeat`` times; the report gives the median of the
repetitions. Outputs: ``results.json`` (records, machine, revisions),
``comparison.md`` (the side-by-side table with the ratios) and the plots
of ``bench.compare_plots``.
"""

import datetime
import json
import os
import shutil
import tempfile
import time

from bench import (
    api,
    compare_plots,
    compare_report,
    heat_topology,
    heat_venv,
    heatclient_api,
    machine,
    report,
    scenarios,
    topology,
)
from bench.results import Results

TARGETS = ("heat_lite", "heat")


def _targets(opts, workroot, bin_dir):
    lite = topology.Topology("postgresql", opts.workers, workroot)
    lite.name = "heat_lite"
    lite.client_class = heatclient_api.HeatClientStackClient
    heat = heat_topology.HeatTopology(bin_dir, opts.workers, workroot)
    return [lite, heat]


def run_target(topo, opts, results, data):
    """Every scenario, ``opts.repeat`` times, on one started target;
    always stopped at the end."""
    try:
        topo.start()
    except (topology.Unavailable, RuntimeError) as exc:
        results.add(
            topo.name, "all", "-", 0, "failed", reason=str(exc)[-2000:]
        )
        return
    from bench import cli  # cli imports this module

    try:
        for rep in range(opts.repeat):
            _sizes(topo, opts, results, rep)
            cli.run_throughput(topo, opts, results)
    except Exception as exc:  # noqa: BLE001 - keep the other target
        results.add(
            topo.name,
            "all",
            "-",
            0,
            "failed",
            reason="%s: %s" % (type(exc).__name__, exc),
        )
    finally:
        data["targets"][topo.name] = topo.describe()
        topo.stop()
        topo.logs(os.path.join(opts.out, "logs"))


def _sizes(topo, opts, results, rep):
    ctx = scenarios.Context(
        topo,
        results,
        opts.scenarios,
        opts.op_timeout,
        opts.full_max,
        opts.concurrent_sizes,
    )
    gave_up = set()
    for n in opts.sizes:
        for shape in opts.shapes:
            if shape in gave_up:
                results.add(
                    topo.name,
                    "all",
                    shape,
                    n,
                    "skipped",
                    reason="gave up: a smaller %s overran --op-timeout"
                    % shape,
                )
                continue
            before = len(results.records)
            try:
                scenarios.run_size(ctx, shape, n)
            except api.OpTimeout:
                gave_up.add(shape)
                topo.restart()
            except api.OpFailed:
                topo.restart()
            for rec in results.records[before:]:
                rec["repetition"] = rep


def main(opts):
    os.makedirs(os.path.join(opts.out, "logs"), exist_ok=True)
    started = datetime.datetime.now(datetime.UTC)
    data = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "mode": "against-heat",
            "revision": _revision(),
            "machine": machine.describe(),
            "workers": opts.workers,
            "sizes": opts.sizes,
            "shapes": opts.shapes,
            "scenarios": opts.scenarios,
            "repeat": opts.repeat,
            "quick": opts.quick,
            "op_timeout_s": opts.op_timeout,
            "heat_constraints": os.path.relpath(
                heat_venv.CONSTRAINTS, os.path.dirname(heat_venv.HERE)
            ),
            "heat_constraints_sha256_12": heat_venv.constraints_hash(),
        },
        "targets": {},
    }
    results = Results(echo=lambda line: print(line, flush=True))
    bin_dir = heat_venv.ensure()
    data["meta"]["heat_version"] = heat_venv.installed_version(bin_dir)
    workroot = tempfile.mkdtemp(prefix="heat-lite-vs-heat-")
    clock = time.monotonic()
    try:
        for topo in _targets(opts, workroot, bin_dir):
            run_target(topo, opts, results, data)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
        data["meta"]["elapsed_s"] = round(time.monotonic() - clock, 1)
        data["meta"]["load_average_at_end"] = machine.load_average()
        write(opts.out, data, results.records)
    return 1 if results.find(status="failed") else 0


def write(out_dir, data, records):
    data["records"] = records
    data["comparison"] = compare_report.rows(records)
    data["plots"] = compare_plots.write_all(
        data["comparison"], out_dir, machine.caption(data["meta"])
    )
    report.write_json(out_dir, data)
    compare_report.write_markdown(out_dir, data)
    print("results: %s" % out_dir)


def render(run_dir, out_dir):
    """Rewrite the table and plots of an earlier run (its results.json)
    into ``out_dir``, e.g. after the report's code changed."""
    with open(os.path.join(run_dir, "results.json")) as f:
        data = json.load(f)
    os.makedirs(out_dir, exist_ok=True)
    write(out_dir, data, data["records"])
    return 0


def _revision():
    from bench import cli

    return cli.revision()
