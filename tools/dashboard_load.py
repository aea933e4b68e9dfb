"""What 50 open dashboards cost other API clients:
``python -m tools.dashboard_load [N [PERIOD]]``.

Starts a heat-lite-all (SQLite) with a 3-resource stack, then measures
the latency of another client's ``GET /stacks`` with no dashboard open
and with N (default 50) simulated dashboards polling the stack page as
the page does while an operation runs (its fastest rate: the stack, its
resources, its events and each resource's versions every 2 s, with
If-None-Match; PERIOD 10 is the page's rate when nothing runs). Prints
the percentiles in ms as JSON.
"""

import json
import statistics
import sys
import tempfile
import threading
import time

import requests

from tests.functional import deployment, helpers

PERIOD = 2.0
SECONDS = 15


def _dashboard(base, stop, period):
    sess = requests.Session()
    etags = {}
    paths = [
        "",
        "/resources",
        "/events?sort_dir=desc&limit=50",
    ] + ["/resources/r%d/versions" % i for i in range(3)]
    while not stop.is_set():
        started = time.time()
        for path in paths:
            headers = {}
            if path in etags:
                headers["If-None-Match"] = etags[path]
            resp = sess.get(base + path, headers=headers, timeout=30)
            if resp.headers.get("ETag"):
                etags[path] = resp.headers["ETag"]
        stop.wait(max(0.0, period - (time.time() - started)))


def _latencies(url, seconds):
    sess = requests.Session()
    found = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        started = time.perf_counter()
        sess.get(url, timeout=30).raise_for_status()
        found.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
    found.sort()
    return {
        "p50": round(statistics.median(found), 1),
        "p95": round(found[int(len(found) * 0.95)], 1),
        "n": len(found),
    }


def main(count=50, period=PERIOD):
    dep = deployment.Deployment("sqlite", tempfile.mkdtemp()).start()
    try:
        heat = dep.client("demo")
        stack_id = helpers.create(heat, "watched", helpers.chain(3))
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
        base = dep.endpoint("demo") + "/stacks/watched/" + stack_id
        other = dep.endpoint("other") + "/stacks"
        result = {"alone": _latencies(other, SECONDS)}
        stop = threading.Event()
        threads = [
            threading.Thread(target=_dashboard, args=(base, stop, period))
            for _ in range(int(count))
        ]
        for t in threads:
            t.start()
        time.sleep(period)
        result["with_%d_dashboards_every_%gs" % (count, period)] = _latencies(
            other, SECONDS
        )
        stop.set()
        for t in threads:
            t.join()
        json.dump(result, sys.stdout)
        print()
    finally:
        dep.stop()


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:3]))
