"""Plots of ``--against-heat``, from the rows of ``bench.compare_report``:

* ``vs_heat_time.png``: seconds vs N (log-log), one panel per scenario,
  heat_lite and Heat side by side, a line per shape;
* ``vs_heat_ratio.png``: the ratio Heat / heat_lite per scenario, shape
  and N as bars on a log axis (throughput: heat_lite / Heat stacks/s).

Without matplotlib (the ``bench`` extra) no plot is written.
"""

import os

from bench import compare_report, plots

COLORS = {"heat_lite": "tab:blue", "heat": "tab:red"}
STYLES = {"flat": "o-", "chain": "s--"}


def write_all(comparison, out_dir, caption=None):
    """Write both plots, each with ``caption`` (commit, machine) at its
    foot; return the file names written."""
    if not plots.available() or not comparison:
        return []
    names = [
        time_plot(comparison, out_dir, caption),
        ratio_plot(comparison, out_dir, caption),
    ]
    return [name for name in names if name]


def time_plot(comparison, out_dir, caption=None):
    rows = [
        r for r in comparison if r["scenario"] not in compare_report.THROUGHPUT
    ]
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    if not scenarios:
        return None
    plt = plots._pyplot()
    cols = min(3, len(scenarios))
    nrows = (len(scenarios) + cols - 1) // cols
    fig, axes = plt.subplots(
        nrows, cols, figsize=(5.0 * cols, 4.0 * nrows), squeeze=False
    )
    for ax, scenario in zip(axes.flat, scenarios, strict=False):
        for target, color in COLORS.items():
            for shape, style in STYLES.items():
                pts = [
                    (r["n"], r[target])
                    for r in rows
                    if r["scenario"] == scenario
                    and r["shape"] == shape
                    and r[target]
                ]
                if pts:
                    ax.loglog(
                        *zip(*sorted(pts), strict=True),
                        style,
                        color=color,
                        label="%s %s" % (target, shape),
                    )
        ax.set_title(scenario)
        ax.set_xlabel("resources (N)")
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(scenarios) :]:
        ax.set_visible(False)
    fig.suptitle("heat_lite vs Heat: seconds vs N")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    plots.foot(fig, caption)
    name = "vs_heat_time.png"
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def ratio_plot(comparison, out_dir, caption=None):
    rows = [r for r in comparison if r["ratio"]]
    if not rows:
        return None
    plt = plots._pyplot()
    labels = [
        "%s %s %s" % (r["scenario"], r["shape"], r["n"])
        if r["scenario"] not in compare_report.THROUGHPUT
        else r["scenario"]
        for r in rows
    ]
    fig, ax = plt.subplots(figsize=(7.0, 0.32 * len(rows) + 1.5))
    ax.barh(
        range(len(rows)),
        [r["ratio"] for r in rows],
        color=["tab:red" if r["ratio"] >= 1 else "tab:blue" for r in rows],
    )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize="small")
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    for i, r in enumerate(rows):
        ax.text(r["ratio"], i, " %.1f x" % r["ratio"], va="center", fontsize=7)
    ax.set_xlabel("Heat / heat_lite (time; throughput: heat_lite / Heat)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plots.foot(fig, caption)
    name = "vs_heat_ratio.png"
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name
