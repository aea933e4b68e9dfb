"""The side-by-side table of ``--against-heat``: heat_lite and Heat on
the same scenarios, with the ratio Heat / heat_lite (above 1: heat_lite
is faster by that factor).

Each cell is the median over the repetitions of that scenario; the
engine CPU column is what the kernel charged the engine processes per
resource (their idle work and the cost of the client's polls included,
for both), which a loaded machine distorts far less than seconds.
"""

import os
import statistics

from bench import report, stats

THROUGHPUT = ("throughput_create", "throughput_update", "throughput_delete")
ORDER = (
    "create",
    "update_inplace",
    "update_half",
    "update_replace",
    "delete",
    "concurrent_update",
) + THROUGHPUT


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _value(rec):
    """Seconds of a size scenario; stacks per second of a throughput
    phase."""
    if rec["scenario"] in THROUGHPUT:
        return (rec.get("extra") or {}).get("stacks_per_second")
    return rec["seconds"]


def _raw_cpu(rec):
    """Engine CPU ms per resource, raw: heat_lite's net figures subtract
    its idle work and its polls, which Heat's cannot, so both are shown
    with them included."""
    raw = (rec.get("costs") or {}).get("raw") or {}
    if "cpu_ms_engine" not in raw or not rec.get("resources"):
        return None
    return raw["cpu_ms_engine"] / rec["resources"]


def rows(records):
    """One dict per (scenario, shape, N) measured on either target."""
    cells = {}
    for rec in records:
        if rec["status"] != "ok" or rec["scenario"] not in ORDER:
            continue
        n = "-" if rec["scenario"] in THROUGHPUT else rec["n"]
        key = (rec["scenario"], rec["shape"], n)
        cell = cells.setdefault(key, {}).setdefault(rec["topology"], [])
        cell.append(rec)
    out = []
    for (scenario, shape, n), by_target in sorted(
        cells.items(), key=lambda kv: (ORDER.index(kv[0][0]), kv[0][1:])
    ):
        row = {"scenario": scenario, "shape": shape, "n": n}
        for target in ("heat_lite", "heat"):
            recs = by_target.get(target, [])
            row[target] = _median(_value(r) for r in recs)
            row[target + "_cpu_ms_res"] = _median(map(_raw_cpu, recs))
            row[target + "_reps"] = len(recs)
        lite, heat = row["heat_lite"], row["heat"]
        row["ratio"] = None
        if lite and heat:
            throughput = scenario in THROUGHPUT
            row["ratio"] = round(lite / heat if throughput else heat / lite, 2)
        out.append(row)
    return out


def _fmt(value, pattern="%.3f"):
    return "-" if value is None else pattern % value


def _size_rows(comparison):
    return [
        [
            r["scenario"],
            r["shape"],
            r["n"],
            _fmt(r["heat_lite"]),
            _fmt(r["heat"]),
            _fmt(r["ratio"], "%.1f x"),
            _fmt(r["heat_lite_cpu_ms_res"], "%.1f"),
            _fmt(r["heat_cpu_ms_res"], "%.1f"),
            "%d / %d" % (r["heat_lite_reps"], r["heat_reps"]),
        ]
        for r in comparison
        if r["scenario"] not in THROUGHPUT
    ]


def _slope_rows(comparison):
    series = {}
    for r in comparison:
        if r["scenario"] not in THROUGHPUT:
            series.setdefault((r["scenario"], r["shape"]), []).append(r)
    out = []
    for (scenario, shape), rs in series.items():
        if len({r["n"] for r in rs}) < 2:
            continue
        slopes = [
            stats.loglog_slope([(r["n"], r[target]) for r in rs])
            for target in ("heat_lite", "heat")
        ]
        sizes = ",".join(str(r["n"]) for r in sorted(rs, key=lambda r: r["n"]))
        out.append(
            [scenario, shape, sizes] + [_fmt(x, "%.2f") for x in slopes]
        )
    return out


def _throughput_rows(comparison):
    return [
        [
            r["scenario"].split("_", 1)[1],
            _fmt(r["heat_lite"], "%.2f"),
            _fmt(r["heat"], "%.2f"),
            _fmt(r["ratio"], "%.1f x"),
            _fmt(r["heat_lite_cpu_ms_res"], "%.1f"),
            _fmt(r["heat_cpu_ms_res"], "%.1f"),
        ]
        for r in comparison
        if r["scenario"] in THROUGHPUT
    ]


def provenance(meta):
    mach = meta["machine"]
    return (
        "heat_lite %s vs OpenStack Heat %s (pins: %s, sha256 %s); "
        "%d engine workers each; machine: %s cores (%s), %s GiB, "
        "Linux %s; load average at start %s, at end %s; %s repetition(s); "
        "run took %.0f s, started %s."
        % (
            meta["revision"],
            meta.get("heat_version"),
            meta["heat_constraints"],
            meta["heat_constraints_sha256_12"],
            meta["workers"],
            mach["cpus"],
            mach["cpu_model"] or "?",
            mach["memory_gib"],
            mach["kernel"],
            " ".join("%.2f" % x for x in mach["load_average_at_start"]),
            " ".join("%.2f" % x for x in meta.get("load_average_at_end", [])),
            meta["repeat"],
            meta.get("elapsed_s", 0),
            meta["started"],
        )
    )


WHY_HEAT_IS_SLOW = """\
Where the time goes in Heat (read in the openstack-heat 27 sources this
run installed):

* **Flat stacks: one second per leaf.** ``Stack.converge_stack`` casts
  ``check_resource`` for each leaf of the graph and then sleeps 1 s
  (``time.sleep(1)`` while ``scheduler.ENABLE_SLEEP``, true outside
  Heat's unit tests) before the next one. A flat stack of N resources
  has N leaves, so every create, update and delete of it takes at least
  N - 1 seconds, whatever the hardware. A chain has one leaf and does
  not pay it.
* **One thread per stack operation does the casting.** The loop runs in a
  thread the engine that took the request starts for the stack, after
  the API has answered (Heat accepted every request of this run in
  30-100 ms), so N - 1 seconds pass between the first leaf and the last
  one being started, however idle the engines are: Heat's flat times
  are that sleep, and its throughput is bound by it.
* **Per-step reloads in a chain.** Each ``check_resource`` message
  reloads the stack, its templates and the resource rows, and each
  completion goes through a sync-point row per node; the chain's time
  per step is that round trip.
* **A thread-group leak.** The engine keeps a thread group per stack
  and Heat 27's ``ThreadGroup.add_thread`` appends every thread it starts
  to the group's list, which nothing shortens; at ``max_threads`` (1,000)
  it raises "Maximum number of threads reached". Every stack-level
  event (``Stack.dispatch_event``) and every converge
  (``_converge_create_or_update``) starts one in the engine that took
  the request, so after roughly a thousand events on one stack in one
  engine, operations on that stack fail until the engine restarts. This
  run's updates per stack stay far below that unless the failures below
  say otherwise.
"""


def markdown(data):
    meta = data["meta"]
    comparison = data["comparison"]
    out = [
        "# heat_lite vs OpenStack Heat, %s" % meta["started"],
        "",
        provenance(meta),
        "",
        "Same scenarios, same PostgreSQL server and RabbitMQ, both driven "
        "by python-heatclient; seconds are from the request to the poll "
        "that saw COMPLETE, medians over the repetitions; ratio = Heat / "
        "heat_lite (above 1: heat_lite is faster). Engine CPU is what the "
        "kernel charged the engine processes per resource, idle work and "
        "the client's polls included.",
        "",
    ]
    out += report.table(
        [
            "scenario",
            "shape",
            "N",
            "heat_lite s",
            "Heat s",
            "ratio",
            "heat_lite engine CPU ms/res",
            "Heat engine CPU ms/res",
            "reps (lite / Heat)",
        ],
        _size_rows(comparison),
    )
    rows = _slope_rows(comparison)
    if rows:
        out += [
            "## Scaling: log-log slope of time vs N",
            "",
            "1.0: ten times the resources take ten times as long.",
            "",
        ]
        out += report.table(
            ["scenario", "shape", "sizes", "heat_lite slope", "Heat slope"],
            rows,
        )
    rows = _throughput_rows(comparison)
    if rows:
        out += [
            "## Throughput (stacks of 10 OS::Heat::None)",
            "",
            "Stacks per second; ratio = heat_lite / Heat.",
            "",
        ]
        out += report.table(
            [
                "phase",
                "heat_lite stacks/s",
                "Heat stacks/s",
                "ratio",
                "heat_lite engine CPU ms/res",
                "Heat engine CPU ms/res",
            ],
            rows,
        )
    out += [WHY_HEAT_IS_SLOW]
    out += report.trailer(data["records"], data, "target")
    return "\n".join(out) + "\n"


def write_markdown(out_dir, data):
    path = os.path.join(out_dir, "comparison.md")
    with open(path, "w") as f:
        f.write(markdown(data))
    return path
