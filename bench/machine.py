"""Where a figure came from: the machine, and how loaded it was.

Every run records it (``meta.machine`` of ``results.json``), every record
the load average when its operation ended, and every table and plot
prints the commit and the machine, so that a figure read out of context
still says what it measures. The machine is shared: the load average says
how much of the wall-clock time the neighbours took.
"""

import os
import platform


def load_average():
    """The 1, 5 and 15 minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def describe():
    """Cores, CPU model, memory, kernel, Python and the load average now
    (the start of the run)."""
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "system": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": load_average(),
    }


def caption(meta):
    """One line naming the commit and the machine of a run's ``meta``."""
    mach = meta.get("machine") or {}
    text = "heat_lite %s, %s; %s cores%s, %s GiB" % (
        meta.get("revision", "?"),
        meta.get("started", "?"),
        mach.get("cpus", meta.get("cpus", "?")),
        " (%s)" % mach["cpu_model"] if mach.get("cpu_model") else "",
        mach.get("memory_gib", meta.get("memory_gib", "?")),
    )
    if mach.get("load_average_at_start"):
        text += "; load average %s at start" % " ".join(
            "%.1f" % x for x in mach["load_average_at_start"]
        )
        if meta.get("load_average_at_end"):
            text += ", %s at end" % " ".join(
                "%.1f" % x for x in meta["load_average_at_end"]
            )
    return text
