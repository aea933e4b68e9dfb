"""Numbers derived from the records: scaling slopes, percentiles, and
issue 7's targets checked against the measurements.

The slope is the least-squares fit of log(seconds) against log(N): 1.0
means the cost per resource is constant (doubling N doubles the time),
above 1 the per-resource cost grows with the stack, below 1 a fixed
overhead still dominates the small sizes.
"""

import math


def loglog_slope(points):
    """Fitted slope of log(y) vs log(x), or None with < 2 sizes."""
    points = [(x, y) for x, y in points if x > 0 and y and y > 0]
    if len({x for x, _ in points}) < 2:
        return None
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return round(sxy / sxx, 3)


def percentile(values, pct):
    """Linear-interpolated percentile (``pct`` in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(seconds):
    """p50/p90/p99/max in milliseconds, and the request count."""
    return {
        "count": len(seconds),
        **{
            "p%d" % p: round(percentile(seconds, p) * 1000, 2)
            for p in (50, 90, 99)
        },
        "max": round(max(seconds) * 1000, 2),
    }


def fits(records):
    """Slope of time vs N for every (topology, scenario, shape) of the
    size scenarios with at least two sizes."""
    series = {}
    for rec in records:
        if rec["status"] != "ok" or rec["scenario"].startswith(
            ("throughput", "resource_group")
        ):
            continue
        key = (rec["topology"], rec["scenario"], rec["shape"])
        series.setdefault(key, []).append((rec["n"], rec["seconds"]))
    out = []
    for (topology, scenario, shape), points in sorted(series.items()):
        points.sort()
        # The overall fit hides where the scaling changes (a fixed cost
        # at small N, a growing one at large N): give each step too.
        steps = [
            loglog_slope(points[i : i + 2]) for i in range(len(points) - 1)
        ]
        out.append(
            {
                "topology": topology,
                "scenario": scenario,
                "shape": shape,
                "sizes": [n for n, _ in points],
                "slope": loglog_slope(points),
                "step_slopes": steps,
            }
        )
    return out


def engine_rss_mb(rec):
    """Peak RSS of the engine processes (or heat-lite-all) in MB."""
    values = [v for k, v in rec.get("rss_kb", {}).items() if k != "api"]
    return max(values) / 1024.0 if values else None


def _one(records, **match):
    for rec in records:
        if rec["status"] == "ok" and all(
            rec.get(k) == v for k, v in match.items()
        ):
            return rec
    return None


def targets(records, topology):
    """Issue 7's targets for one topology: (target, measured, met)."""
    rows = []
    chain = [
        r
        for r in records
        if r["topology"] == topology
        and r["shape"] == "chain"
        and r["scenario"] == "create"
        and r["status"] == "ok"
    ]
    if chain:
        big = max(chain, key=lambda r: r["n"])
        step = 1000.0 * big["seconds"] / big["n"]
        rows.append(
            (
                "chain create <= 5 ms per step (N=%d)" % big["n"],
                "%.1f ms" % step,
                step <= 5,
            )
        )
    for n, limit in ((1000, 5), (10000, 60)):
        rec = _one(
            records, topology=topology, scenario="create", shape="flat", n=n
        )
        if rec:
            rows.append(
                (
                    "flat %d create <= %d s" % (n, limit),
                    "%.1f s" % rec["seconds"],
                    rec["seconds"] <= limit,
                )
            )
    rec = _one(
        records, topology=topology, scenario="create", shape="flat", n=10000
    )
    if rec:
        rss = engine_rss_mb(rec)
        rows.append(
            ("flat 10000 engine RSS <= 500 MB", "%.0f MB" % rss, rss <= 500)
        )
    rows.extend(_cost_targets(records, topology))
    for rec in records:
        if (
            rec["topology"] == topology
            and rec["status"] == "ok"
            and rec["scenario"] == "concurrent_update"
        ):
            ratio = rec["extra"]["ratio"]
            rows.append(
                (
                    "concurrent update %s %d <= 1.2x alone"
                    % (rec["shape"], rec["n"]),
                    "%.2fx" % ratio,
                    ratio <= 1.2,
                )
            )
    rec = _one(records, topology=topology, scenario="throughput_update")
    if rec:
        rate = rec["extra"]["stacks_per_second"]
        rows.append(
            (
                ">= 20 updates/s of 10-resource stacks (%.0f s)"
                % rec["seconds"],
                "%.1f/s" % rate,
                rate >= 20,
            )
        )
    return rows


def round2_targets(records, topology):
    """Issue 18's time targets for one topology: (target, measured, met).

    Only where the run measured them: the chain step at N = 1,000, the
    flat create of 10,000 and its engines' RSS, and the update rate of
    10-resource stacks with the p99 of an update (request to COMPLETE
    seen) over a run of at least 10 minutes (a shorter run is reported,
    never met).
    """
    rows = []
    rec = _one(
        records, topology=topology, scenario="create", shape="chain", n=1000
    )
    if rec:
        step = 1000.0 * rec["seconds"] / rec["n"]
        rows.append(
            (
                "chain 1000 create <= 2.5 ms per step",
                "%.2f ms" % step,
                step <= 2.5,
            )
        )
    rec = _one(
        records, topology=topology, scenario="create", shape="flat", n=10000
    )
    if rec:
        rows.append(
            (
                "flat 10000 create <= 12 s",
                "%.1f s" % rec["seconds"],
                rec["seconds"] <= 12,
            )
        )
        rss = engine_rss_mb(rec)
        rows.append(
            ("flat 10000 engine RSS <= 300 MB", "%.0f MB" % rss, rss <= 300)
        )
    rec = _one(records, topology=topology, scenario="throughput_update")
    if rec:
        rate = rec["extra"]["stacks_per_second"]
        p99 = (rec["extra"]["latency_ms"].get("operation") or {}).get("p99")
        long_enough = rec["seconds"] >= 600
        rows.append(
            (
                ">= 35 updates/s for 10 minutes, p99 update <= 1 s",
                "%.1f/s for %.0f s, p99 %s"
                % (
                    rate,
                    rec["seconds"],
                    "-" if p99 is None else "%.0f ms" % p99,
                ),
                long_enough and rate >= 35 and p99 is not None and p99 <= 1000,
            )
        )
    return rows


def _cost_targets(records, topology):
    rows = []
    creates = [
        r
        for r in records
        if r["topology"] == topology
        and r["scenario"] == "create"
        and r["status"] == "ok"
    ]
    if not creates:
        return rows
    # At the largest N, where the per-stack fixed cost is amortised.
    for shape in ("flat", "chain"):
        sized = [r for r in creates if r["shape"] == shape]
        if not sized:
            continue
        big = max(sized, key=lambda r: r["n"])
        sql = big["per_resource"].get("sql_statements", 0)
        casts = big["per_resource"].get("rpc_casts", 0)
        rows.append(
            (
                "<= 6 SQL statements per resource create (%s %d)"
                % (shape, big["n"]),
                "%.2f" % sql,
                sql <= 6,
            )
        )
        rows.append(
            (
                "<= 1 RPC cast per resource create (%s %d)"
                % (shape, big["n"]),
                "%.3f" % casts,
                casts <= 1,
            )
        )
    for fit in fits(creates):
        if fit["slope"] is not None:
            # Doubling N multiplies the time by 2 ** slope: within +/-20 %
            # of 2 means a slope between log2(1.6) and log2(2.4).
            factor = 2 ** fit["slope"]
            rows.append(
                (
                    "create %s: 2x N -> 2x time +/-20 %%" % fit["shape"],
                    "slope %.2f (x%.2f)" % (fit["slope"], factor),
                    1.6 <= factor <= 2.4,
                )
            )
    return rows
