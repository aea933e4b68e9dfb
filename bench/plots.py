"""PNG plots of a run, so a reader sees the scaling at a glance.

* ``time_<topology>.png``: seconds vs N on log-log axes, one panel per
  scenario, one line per shape, with a dashed slope-1 guide through the
  smallest point (a line parallel to it scales linearly);
* ``cost_per_resource.png``: net SQL statements, transactions, RPC casts
  and events per resource vs N for create and in-place update, one line
  per topology and shape (flat lines: the cost per resource is constant).

matplotlib is an optional dependency (the ``bench`` extra): without it the
run still writes its JSON and markdown and says that plots were skipped.
"""

import os

SCENARIOS = (
    "create",
    "update_inplace",
    "update_half",
    "update_replace",
    "delete",
    "concurrent_update",
)
COSTS = (
    ("sql_statements", "SQL statements"),
    ("sql_commits", "transactions"),
    ("rpc_casts", "RPC casts"),
    ("events", "events"),
)
STYLES = {"flat": "o-", "chain": "s-"}
COLORS = {"all": "tab:green", "postgresql": "tab:blue", "mysql": "tab:orange"}
LINES = {"create": "-", "update_inplace": "--"}


def available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _series(records, **match):
    recs = sorted(
        (
            r
            for r in records
            if r["status"] == "ok" and all(r[k] == v for k, v in match.items())
        ),
        key=lambda r: r["n"],
    )
    return [r["n"] for r in recs], recs


def _ticks(ax, records, y=True):
    """Plain numbers on log axes; an x tick at every size measured."""
    from matplotlib import ticker

    plain = ticker.FuncFormatter(lambda value, _: "%g" % value)
    sizes = sorted(
        {
            r["n"]
            for r in records
            if r["status"] == "ok" and r["scenario"] in SCENARIOS
        }
    )
    ax.set_xticks(sizes)
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    if y:
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_locator(ticker.LogLocator(subs=(2.0, 5.0)))
        ax.yaxis.set_minor_formatter(plain)


def foot(fig, text):
    """The commit and machine a figure came from, at its foot."""
    if text:
        fig.text(
            0.01, 0.005, text, fontsize="x-small", color="grey", wrap=True
        )


def time_plot(records, topology, out_dir, caption=None):
    """One figure of every size scenario of ``topology``; its file name,
    or None when nothing was measured."""
    scenarios = [
        s
        for s in SCENARIOS
        if _series(records, topology=topology, scenario=s)[0]
    ]
    if not scenarios:
        return None
    plt = _pyplot()
    cols = min(3, len(scenarios))
    rows = (len(scenarios) + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.5 * cols, 3.6 * rows), squeeze=False
    )
    for ax, scenario in zip(axes.flat, scenarios, strict=False):
        for shape, style in STYLES.items():
            sizes, recs = _series(
                records, topology=topology, scenario=scenario, shape=shape
            )
            if not sizes:
                continue
            secs = [r["seconds"] for r in recs]
            ax.loglog(sizes, secs, style, label=shape)
            if scenario == "concurrent_update":
                ax.loglog(
                    sizes,
                    [r["extra"]["alone_seconds"] for r in recs],
                    style[0] + "--",
                    label=shape + " (#2 alone)",
                )
            if len(sizes) > 1:
                ax.loglog(
                    [sizes[0], sizes[-1]],
                    [secs[0], secs[0] * sizes[-1] / sizes[0]],
                    ":",
                    color="grey",
                    linewidth=0.8,
                )
        ax.set_title(scenario)
        _ticks(ax, records)
        ax.set_xlabel("resources (N)")
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(scenarios) :]:
        ax.set_visible(False)
    fig.suptitle("heat_lite %s: time vs N (dotted: slope 1)" % topology)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    foot(fig, caption)
    name = "time_%s.png" % topology
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def cost_plot(records, topologies, out_dir, caption=None):
    """Per-resource costs of create and in-place update vs N."""
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(COSTS), figsize=(4.2 * len(COSTS), 5.2), squeeze=False
    )
    drawn = False
    for ax, (key, label) in zip(axes.flat, COSTS, strict=True):
        for topology in topologies:
            for scenario in ("create", "update_inplace"):
                for shape, style in STYLES.items():
                    sizes, recs = _series(
                        records,
                        topology=topology,
                        scenario=scenario,
                        shape=shape,
                    )
                    if not sizes:
                        continue
                    drawn = True
                    ax.semilogx(
                        sizes,
                        [r["per_resource"].get(key, 0.0) for r in recs],
                        style[0],
                        linestyle=LINES[scenario],
                        color=COLORS.get(topology),
                        label="%s %s %s" % (topology, scenario, shape),
                    )
        ax.set_title("%s per resource" % label)
        _ticks(ax, records, y=False)
        ax.set_xlabel("resources (N)")
        ax.set_ylim(bottom=0)
        ax.grid(True, which="both", alpha=0.3)
    if not drawn:
        plt.close(fig)
        return None
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="lower center",
        fontsize="small",
        ncol=4,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0.03 * ((len(labels) + 3) // 4 + 2), 1, 1))
    foot(fig, caption)
    name = "cost_per_resource.png"
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def write_all(records, topologies, out_dir, caption=None):
    """Write every plot, each with ``caption`` (commit and machine) at its
    foot; return the file names written."""
    names = [
        time_plot(records, topology, out_dir, caption)
        for topology in topologies
    ]
    names.append(cost_plot(records, topologies, out_dir, caption))
    return [name for name in names if name]
