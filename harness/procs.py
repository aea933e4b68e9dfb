"""Processes of the machine, read from /proc: who is whose child, what
CPU they used. Deployments find their engine workers with it; the
benchmarks count the CPU seconds of the processes they started."""

import os


def proc_stats():
    """Yield (pid, fields of /proc/<pid>/stat after the command name:
    [0] state, [1] ppid, [3] session, [11:15] utime stime cutime
    cstime) of every process now."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        yield int(entry), fields


def children(parent):
    """PIDs of the processes whose parent is ``parent`` now."""
    return [pid for pid, fields in proc_stats() if int(fields[1]) == parent]


def tree_cpu_seconds(roots):
    """CPU seconds (user + system) the processes ``roots`` and all their
    descendants now alive have used so far (a benchmark takes the
    difference of two reads)."""
    stats = dict(proc_stats())
    kids = {}
    for pid, fields in stats.items():
        kids.setdefault(int(fields[1]), []).append(pid)
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        fields = stats.get(pid)
        if fields is None:
            continue
        total += int(fields[11]) + int(fields[12])
        todo += kids.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")
