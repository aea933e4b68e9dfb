"""The run's outputs a reader looks at: ``results.json`` (everything) and
``results.md`` (the tables), beside the plots of ``bench.plots``.

The markdown reports net per-resource costs: the counters' deltas minus
the idle background and the client's polls (see ``bench.topology``),
divided by the resources the operation touched.
"""

import json
import os

from bench import machine, stats

COST_KEYS = (
    ("sql_statements", "SQL/res"),
    ("sql_commits", "txn/res"),
    ("rpc_casts", "casts/res"),
    ("rpc_calls", "calls/res"),
    ("events", "events/res"),
)
CPU_KEYS = ("cpu_ms_engine", "cpu_ms_all")


def write_json(out_dir, data):
    path = os.path.join(out_dir, "results.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    return path


def api_rss_mb(rec):
    value = rec.get("rss_kb", {}).get("api")
    return value / 1024.0 if value else None


def _fmt(value, pattern="%.2f"):
    return "-" if value is None else pattern % value


def trailer(records, data, first_column):
    """The report's closing sections: the runs that did not succeed, and
    the plots (shared by the comparison report)."""
    out = []
    others = [r for r in records if r["status"] != "ok"]
    if others:
        out += ["## Not run, failed or timed out", ""]
        out += table(
            [first_column, "scenario", "shape", "N", "status", "reason"],
            [
                [
                    r["topology"],
                    r["scenario"],
                    r["shape"],
                    r["n"],
                    r["status"],
                    (r.get("reason") or "").replace("|", "/")[:200],
                ]
                for r in others
            ],
        )
    if data.get("plots"):
        out += ["## Plots", ""]
        out += ["![%s](%s)" % (name[:-4], name) for name in data["plots"]]
    return out


def table(header, rows):
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _engine_cpu(per):
    values = [per[k] for k in CPU_KEYS if k in per]
    return values[0] if values else None


def _main_rows(records):
    rows = []
    for rec in records:
        if rec["status"] != "ok" or rec["scenario"].startswith("throughput"):
            continue
        per = rec["per_resource"]
        resources = rec.get("resources") or rec["n"]
        ms = 1000.0 * rec["seconds"] / resources if resources else None
        accept = (rec.get("extra") or {}).get("accept_seconds")
        rows.append(
            [
                rec["topology"],
                rec["scenario"],
                rec["shape"],
                rec["n"],
                _fmt(rec["seconds"], "%.3f"),
                _fmt(accept, "%.3f"),
                _fmt(ms, "%.1f"),
            ]
            + [_fmt(per.get(k, 0.0)) for k, _ in COST_KEYS]
            + [_fmt(_engine_cpu(per)), _fmt(per.get("cpu_ms_api"))]
            + [
                _fmt(stats.engine_rss_mb(rec), "%.0f"),
                _fmt(api_rss_mb(rec), "%.0f"),
            ]
            + [_load(rec)]
        )
    return rows


def _load(rec):
    """The 1-minute load average as the record's operation ended."""
    load = rec.get("load_average")
    return "%.1f" % load[0] if load else "-"


def _concurrent_rows(records):
    rows = []
    for rec in records:
        if rec["scenario"] == "concurrent_update" and rec["status"] == "ok":
            extra = rec["extra"]
            rows.append(
                [
                    rec["topology"],
                    rec["shape"],
                    rec["n"],
                    _fmt(rec["seconds"], "%.3f"),
                    _fmt(extra["alone_seconds"], "%.3f"),
                    _fmt(extra["ratio"]),
                    extra.get("first_update_status_at_second"),
                    extra.get("converged"),
                ]
            )
    return rows


def _latency(extra, kind):
    lat = extra["latency_ms"].get(kind)
    if not lat:
        return "-"
    return "%.0f / %.0f / %.0f" % (lat["p50"], lat["p90"], lat["p99"])


def _throughput_rows(records):
    rows = []
    for rec in records:
        if rec["scenario"].startswith("throughput") and rec["status"] == "ok":
            extra = rec["extra"]
            kind = {
                "throughput_create": "POST",
                "throughput_update": "PUT",
                "throughput_delete": "DELETE",
            }[rec["scenario"]]
            rows.append(
                [
                    rec["topology"],
                    rec["scenario"].split("_")[1],
                    extra["stacks"],
                    extra["threads"],
                    rec["n"],
                    _fmt(rec["seconds"], "%.1f"),
                    _fmt(extra["stacks_per_second"]),
                    _latency(extra, "operation"),
                    _latency(extra, kind),
                    _latency(extra, "GET"),
                    _fmt(rec["per_resource"].get("sql_statements")),
                    _fmt(stats.engine_rss_mb(rec), "%.0f"),
                    _load(rec),
                ]
            )
    return rows


def markdown(data):
    meta = data["meta"]
    records = data["records"]
    out = (
        [
            "# heat_lite benchmark %s" % meta["started"],
            "",
            "Measured on: %s." % machine.caption(meta),
            "",
            "Topologies: %s; engine workers: %s; sizes: %s; heat_lite %s; "
            "machine: %s cores, %s GiB; run took %.0f s."
            % (
                ", ".join(data["topologies"]),
                meta["workers"],
                ", ".join(str(n) for n in meta["sizes"]),
                meta["revision"],
                meta["cpus"],
                meta["memory_gib"],
                meta["elapsed_s"],
            ),
            "",
        ]
        + (
            [
                "Merged from the runs in %s."
                % ", ".join(
                    os.path.basename(p.rstrip("/"))
                    for p in meta["merged_from"]
                ),
                "",
            ]
            if meta.get("merged_from")
            else []
        )
        + [
            "## Operations",
            "",
            "Seconds from the request to the poll that saw COMPLETE "
            "(accept s: until the API answered the request); "
            "costs are net counts per resource; CPU is what the kernel "
            "charged the heat_lite processes (engine: all workers, or "
            "heat-lite-all); RSS is the peak so far; load is the machine's "
            "1-minute load average as the operation ended (2 cores: above "
            "2, the neighbours took part of the wall-clock time).",
            "",
        ]
    )
    out += table(
        ["topology", "scenario", "shape", "N", "seconds", "accept s", "ms/res"]
        + [label for _, label in COST_KEYS]
        + ["engine CPU ms/res", "api CPU ms/res", "engine MB", "api MB"]
        + ["load"],
        _main_rows(records),
    )
    out += [
        "## Scaling: log-log slope of time vs N",
        "",
        "1.0: doubling N doubles the time. The fit covers every "
        "size; each step's slope is between two consecutive sizes.",
        "",
    ]
    out += table(
        [
            "topology",
            "scenario",
            "shape",
            "sizes",
            "slope",
            "slope of each step",
        ],
        [
            [
                f["topology"],
                f["scenario"],
                f["shape"],
                ",".join(str(n) for n in f["sizes"]),
                _fmt(f["slope"]),
                " ".join(_fmt(x) for x in f.get("step_slopes", [])),
            ]
            for f in data["fits"]
        ],
    )
    rows = _concurrent_rows(records)
    if rows:
        out += [
            "## Concurrent update",
            "",
            "Update #2 sent while #1 runs: seconds from #2 accepted "
            "to COMPLETE, against the same update alone.",
            "",
        ]
        out += table(
            [
                "topology",
                "shape",
                "N",
                "#2 during #1 s",
                "#2 alone s",
                "ratio",
                "#1 when #2 sent",
                "converged",
            ],
            rows,
        )
    rows = _throughput_rows(records)
    if rows:
        out += [
            "## Throughput (stacks of 10 OS::Heat::None)",
            "",
            "Latency columns are p50 / p90 / p99 in ms.",
            "",
        ]
        out += table(
            [
                "topology",
                "phase",
                "stacks",
                "threads",
                "ops",
                "seconds",
                "stacks/s",
                "operation ms (to COMPLETE)",
                "request ms",
                "poll GET ms",
                "SQL/res",
                "engine MB",
                "load",
            ],
            rows,
        )
    out += ["## Targets of issue 7", ""]
    out += table(
        ["topology", "target", "measured", "met"],
        [
            [topo, target, measured, "yes" if met else "**no**"]
            for topo in data["topologies"]
            for target, measured, met in stats.targets(records, topo)
        ],
    )
    round2 = [
        [topo, target, measured, "yes" if met else "**no**"]
        for topo in data["topologies"]
        for target, measured, met in stats.round2_targets(records, topo)
    ]
    if round2:
        out += ["", "## Targets of issue 18 (performance, round 2)", ""]
        out += table(["topology", "target", "measured", "met"], round2)
    out += trailer(records, data, "topology")
    return "\n".join(out) + "\n"


def write_markdown(out_dir, data):
    path = os.path.join(out_dir, "results.md")
    with open(path, "w") as f:
        f.write(markdown(data))
    return path
