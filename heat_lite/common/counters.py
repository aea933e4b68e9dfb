"""Cost counters for benchmarks: SQL statements, transactions, RPC casts
and calls, written by each process as JSON to ``[DEFAULT] counters_dir``.

Off unless ``counters_dir`` is set. The counting itself is an integer
increment; a daemon thread writes ``<dir>/<binary>-<pid>.json`` once a
second and at exit, so a benchmark can sum every process's costs.
"""

import atexit
import collections
import json
import os
import resource
import threading
import time

_LOCK = threading.Lock()
_COUNTS = collections.Counter()
_STATE = {"dir": None, "name": None}


def incr(key, amount=1):
    """Count ``amount`` of ``key`` (cheap; always safe to call)."""
    if _STATE["dir"] is not None:
        with _LOCK:
            _COUNTS[key] += amount


def snapshot():
    with _LOCK:
        counts = dict(_COUNTS)
    counts["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return counts


def _write():
    path = os.path.join(
        _STATE["dir"], "%s-%d.json" % (_STATE["name"], os.getpid())
    )
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(snapshot(), f)
    os.replace(tmp, path)


def _loop():
    while True:
        time.sleep(1.0)
        try:
            _write()
        except OSError:
            pass


def enable(directory, name):
    """Start counting in this process (call after fork)."""
    os.makedirs(directory, exist_ok=True)
    with _LOCK:
        _COUNTS.clear()
    _STATE.update(dir=directory, name=name)
    threading.Thread(
        target=_loop, daemon=True, name="heat-lite-counters"
    ).start()
    atexit.register(_write)
