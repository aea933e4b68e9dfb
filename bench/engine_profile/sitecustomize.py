"""Profiles a heat_lite process with yappi (CPU clock, every thread) when
``HEAT_LITE_YAPPI_DIR`` is set: put on ``PYTHONPATH`` by ``bench.cloud
--profile``. Nothing is recorded until ``<dir>/start`` exists; once
``<dir>/stop`` exists the process writes ``<dir>/yappi-<pid>.txt`` (the
functions by own and inclusive CPU time, and the CPU time of each named
thread) and stops profiling. py-spy is not available on every machine;
yappi is a pip install away and needs no ptrace."""

import os
import sys
import threading
import time

_DIR = os.environ.get("HEAT_LITE_YAPPI_DIR")


def _thread_cpu():
    """{thread name: CPU s} from /proc for the threads alive now."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "native-%s" % tid)
        out[name] = (
            out.get(name, 0) + (int(fields[11]) + int(fields[12])) / ticks
        )
    return out


def _watch():
    if "engine" not in os.path.basename(sys.argv[0] if sys.argv else ""):
        return  # heat-lite-api and the rest: not profiled
    # HEAT_LITE_YAPPI_CLOCK=off: the threads' CPU seconds alone (what
    # they really cost: yappi's own cost per call inflates code that makes
    # many small calls, such as openstacksdk's Resource objects).
    clock = os.environ.get("HEAT_LITE_YAPPI_CLOCK", "cpu")
    if clock == "off":
        yappi = None
    else:
        import yappi

    while not os.path.exists(os.path.join(_DIR, "start")):
        time.sleep(0.2)
    before = _thread_cpu()
    if yappi:
        yappi.set_clock_type(clock)
        yappi.start(builtins=False, profile_threads=True)
    while not os.path.exists(os.path.join(_DIR, "stop")):
        time.sleep(0.2)
    if yappi:
        yappi.stop()
    after = _thread_cpu()
    path = os.path.join(_DIR, "yappi-%d.txt" % os.getpid())
    with open(path, "w") as out:
        out.write("# thread CPU s during the recording (/proc), by name\n")
        for name, cpu in sorted(
            after.items(), key=lambda kv: -(kv[1] - before.get(kv[0], 0))
        ):
            out.write("%8.3f  %s\n" % (cpu - before.get(name, 0), name))
        if yappi is None:
            return
        stats = yappi.get_func_stats()
        for sort in ("tsub", "ttot"):
            out.write("\n# functions by %s\n" % sort)
            stats.sort(sort, "desc")
            for st in list(stats)[:150]:
                out.write(
                    "%8.3f %8.3f %7d  %s:%s %s\n"
                    % (
                        st.tsub,
                        st.ttot,
                        st.ncall,
                        st.module,
                        st.lineno,
                        st.name,
                    )
                )
        out.write("\n# yappi threads\n")
        for t in yappi.get_thread_stats():
            out.write("%8.3f  %s %s\n" % (t.ttot, t.name, t.id))


def _start():
    threading.Thread(target=_watch, daemon=True, name="yappi-watch").start()


if _DIR:
    _start()
    # The engine's workers are forked by its supervisor: threads do not
    # survive a fork, so each child starts its own watcher.
    os.register_at_fork(after_in_child=_start)
