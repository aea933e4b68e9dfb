"""What open dashboards cost other API clients:
``python -m tools.dashboard_load [N [PERIOD]] [--legacy] [--busy]
[--weight]``.

Starts a heat-lite-all (SQLite, cost counters on) with a 3-resource
stack, then measures the latency of another project's ``GET /stacks``
with no dashboard open and with N (default 50) simulated stack pages
polling every PERIOD (default 2) seconds, the page's fastest rate (while
an operation runs). A simulated page does what ``stack.js`` does: each
tick one ``GET .../changes`` with If-None-Match, and the stack, its
resources (and record versions) or its events (those after the newest
one seen) only when their mark
moved. ``--legacy`` adds a phase with the page as it was before the
change marks (the stack, its resources, its events and each resource's
versions every tick, with If-None-Match). ``--busy`` adds a phase where
the watched stack is updated again and again meanwhile (each update
moves every mark: the pages' worst case).

Per page tick it reports requests, bytes received (status line, headers
and body), SQL statements and RPC calls (from the process's counters,
over 10 s with the pages alone: counts that do not depend on the
machine's load), and the load average. ``--weight`` also opens the
stack page in headless Chromium and reports what it transferred on the
first visit and per poll (the Resource Timing API's ``transferSize``).
``--horizon`` adds a phase of N Horizon Topology tabs instead, each on
a stack of its own kept in progress (a held TestResource): every tick a
tab does what heat-dashboard's ``d3_data`` view does with the legacy
heatclient -- the stack by ID and its resources by stack name, each a
302 to the canonical URL, with no ETag -- and the phase also reports
the service's CPU seconds per tick and the ratio of the other client's
p95 to its idle p95. Prints JSON.
"""

import glob
import json
import os
import statistics
import sys
import tempfile
import threading
import time

import requests

from harness import deployment, helpers, polling, procs

PERIOD = 2.0
SECONDS = 15
COUNT_SECONDS = 10
_COUNTED = ("sql_statements", "rpc_calls", "seconds")
RESOURCES = 3
_FLUSH = 1.3  # the counters are written once a second


def _size(resp):
    head = len("HTTP/1.1 %d %s\r\n\r\n" % (resp.status_code, resp.reason))
    head += sum(len(k) + len(v) + 4 for k, v in resp.headers.items())
    return head + len(resp.content)


class _Page:
    """One open stack page: a session with the browser's ETag cache."""

    def __init__(self, base):
        self.base = base
        self.sess = requests.Session()
        self.etags = {}
        self.requests = 0
        self.bytes = 0
        self.ticks = 0
        self.marks = None
        self.events = []

    def get(self, path):
        headers = {}
        if path in self.etags:
            headers["If-None-Match"] = self.etags[path][0]
        resp = self.sess.get(self.base + path, headers=headers, timeout=30)
        self.requests += 1
        self.bytes += _size(resp)
        if resp.status_code == 304:
            return self.etags[path][1]
        resp.raise_for_status()
        body = resp.json()
        if resp.headers.get("ETag"):
            self.etags[path] = (resp.headers["ETag"], body)
        return body

    def _versions(self):
        for i in range(RESOURCES):
            self.get("/resources/r%d/versions" % i)

    def _events(self):
        """stack.js's readEvents: the events after the newest one seen."""
        if self.events:
            newer = self.get(
                "/events?sort_dir=asc&limit=50&marker=" + self.events[0]["id"]
            )["events"]
            if len(newer) < 50:
                self.events = (newer[::-1] + self.events)[:50]
                return
        self.events = self.get("/events?sort_dir=desc&limit=50")["events"]

    def tick(self):
        """What stack.js does on each tick."""
        changes = self.get("/changes")["changes"]
        old = self.marks or {}
        if self.marks is None or old["stack"] != changes["stack"]:
            self.get("")
        if self.marks is None or old["resources"] != changes["resources"]:
            self.get("/resources")
            self._versions()
        if self.marks is None or old["events"] != changes["events"]:
            self._events()
        self.marks = changes
        self.ticks += 1

    def legacy_tick(self):
        """What the page did before the change marks, on each tick."""
        self.get("")
        self.get("/resources")
        self.get("/events?sort_dir=desc&limit=50")
        self._versions()
        self.ticks += 1


class _HorizonTab:
    """One Horizon Topology tab on one stack (see the module)."""

    def __init__(self, endpoint, stack_id, name):
        self.endpoint = endpoint
        self.stack_id = stack_id
        self.name = name
        self.sess = requests.Session()
        self.requests = 0
        self.bytes = 0
        self.ticks = 0

    def _get(self, path):
        resp = self.sess.get(self.endpoint + path, timeout=30)
        resp.raise_for_status()
        for answer in [*resp.history, resp]:
            self.requests += 1
            self.bytes += _size(answer)
        return resp.json()

    def tick(self):
        self._get("/stacks/" + self.stack_id)
        self._get("/stacks/%s/resources" % self.name)
        self.ticks += 1


def _watch(page, tick, stop, period):
    tick()  # the first visit reads everything: not counted per tick
    page.requests = page.bytes = page.ticks = 0
    page.ready.set()
    while not stop.is_set():
        started = time.time()
        tick()
        stop.wait(max(0.0, period - (time.time() - started)))


def _churn(heat, stack_id, stop):
    """Update the stack again and again (a new property value each
    time) until ``stop``."""
    i = 0
    while not stop.is_set():
        i += 1
        heat.stacks.update(
            stack_id, template=helpers.chain(RESOURCES, turn=str(i))
        )
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")


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


def _counters(directory):
    time.sleep(_FLUSH)
    total = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        with open(path) as f:
            for key, value in json.load(f).items():
                total[key] = total.get(key, 0) + value
    total["seconds"] = time.monotonic()
    return total


def _cost(directory, measure):
    """(measure()'s result, {sql_statements, rpc_calls} it cost)."""
    before = _counters(directory)
    result = measure()
    after = _counters(directory)
    return result, {k: after.get(k, 0) - before.get(k, 0) for k in _COUNTED}


def _less_idle(before, after, idle):
    """What happened between two counter reads, less the service's own
    background work (``idle``: per second) over that time."""
    seconds = after["seconds"] - before["seconds"]
    return {
        k: after.get(k, 0) - before.get(k, 0) - idle[k] * seconds
        for k in _COUNTED
        if k != "seconds"
    }


def _phase(
    base, other, counters_dir, count, period, legacy, idle, tabs=None, cpu=None
):
    """``tabs``: the pages (Horizon tabs) to run instead of ``count``
    stack pages; ``cpu()``: the service's CPU seconds so far."""
    stop = threading.Event()
    pages = tabs or [_Page(base) for _ in range(count)]
    threads = []
    for page in pages:
        page.ready = threading.Event()
        tick = page.legacy_tick if legacy else page.tick
        threads.append(
            threading.Thread(target=_watch, args=(page, tick, stop, period))
        )
    for t in threads:
        t.start()
    for page in pages:
        page.ready.wait(60)
    time.sleep(period)
    latency = _latencies(other, SECONDS)
    load = [round(x, 2) for x in os.getloadavg()]
    # The pages alone, for their cost per tick.
    before = _counters(counters_dir)
    cpu_before = cpu() if cpu else 0.0
    ticks = sum(p.ticks for p in pages)
    sent = sum(p.requests for p in pages), sum(p.bytes for p in pages)
    time.sleep(COUNT_SECONDS)
    after = _counters(counters_dir)
    cpu_spent = (cpu() - cpu_before) if cpu else None
    ticks = max(1, sum(p.ticks for p in pages) - ticks)
    cost = _less_idle(before, after, idle)
    stop.set()
    for t in threads:
        t.join()
    per_tick = {k: round(v / ticks, 2) for k, v in cost.items()}
    per_tick["requests"] = round(
        (sum(p.requests for p in pages) - sent[0]) / ticks, 2
    )
    per_tick["bytes"] = round((sum(p.bytes for p in pages) - sent[1]) / ticks)
    if cpu_spent is not None:
        seconds = after["seconds"] - before["seconds"]
        per_tick["service_cpu_ms"] = round(
            (cpu_spent - idle["cpu"] * seconds) / ticks * 1000, 2
        )
    return {
        "other_get_stacks_ms": latency,
        "counted_page_ticks": ticks,
        "per_page_tick": per_tick,
        "loadavg": load,
    }


def page_weight(dep, path, polls=5, period_ms=2000):
    """KB the stack page transfers in headless Chromium: on the first
    visit (page, scripts, styles and API reads) and per poll after it."""
    from tests.functional import browser

    b = browser.Browser("chromium")
    script = (
        "const e = performance.getEntries()"
        ".filter((x) => x.transferSize !== undefined);"
        "return [e.length, e.reduce((s, x) => s + x.transferSize, 0)];"
    )
    try:
        b.driver.get(
            "%s/dashboard/?poll_ms=%d#/demo%s" % (dep.url, period_ms, path)
        )
        b.wait_css('#graph g.node[data-resource="r0"]')
        b.wait_css("#events tr[data-event]")
        time.sleep(1.0)
        n0, first = b.driver.execute_script(script)
        time.sleep(polls * period_ms / 1000.0 * 5)  # idle: every 5 periods
        n1, later = b.driver.execute_script(script)
    finally:
        b.quit()
    return {
        "first_visit_kb": round(first / 1024, 1),
        "first_visit_requests": n0,
        "idle_polls": polls,
        "per_poll_kb": round((later - first) / 1024 / polls, 2),
        "per_poll_requests": round((n1 - n0) / polls, 2),
    }


def _horizon_phase(dep, heat, count, period, args, idle, cpu, alone):
    """``count`` Topology tabs polling every ``period`` seconds, each on a
    stack held in progress."""
    hold = "horizon-tabs"
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "quick": {"type": "OS::Heat::TestResource"},
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"hold": hold},
                "depends_on": "quick",
            },
        },
    }
    with helpers.holding(dep.ledger, hold):
        tabs = []
        for i in range(int(count)):
            name = "tab%d" % i
            stack_id = helpers.create(heat, name, template)
            tabs.append(_HorizonTab(dep.endpoint("demo"), stack_id, name))
        polling.until(
            lambda: all(
                heat.stacks.get(t.stack_id).stack_status
                == "CREATE_IN_PROGRESS"
                and any(
                    r.resource_status == "CREATE_COMPLETE"
                    for r in heat.resources.list(t.stack_id)
                )
                for t in tabs
            ),
            120,
            "every watched stack in progress",
            interval=0.5,
        )
        found = _phase(*args, False, idle, tabs=tabs, cpu=cpu)
    found["other_p95_over_idle"] = round(
        found["other_get_stacks_ms"]["p95"]
        / alone["other_get_stacks_ms"]["p95"],
        2,
    )
    return found


def main(
    count=50,
    period=PERIOD,
    legacy=False,
    busy=False,
    weight=False,
    horizon=False,
):
    workdir = tempfile.mkdtemp()
    counters_dir = os.path.join(workdir, "counters")
    dep = deployment.Deployment(
        "sqlite",
        workdir,
        extra_conf="\n[DEFAULT]\ncounters_dir = %s\n" % counters_dir,
    ).start()
    try:
        heat = dep.client("demo")
        stack_id = helpers.create(heat, "watched", helpers.chain(RESOURCES))
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
        path = "/stacks/watched/" + stack_id
        base = dep.endpoint("demo") + path
        other = dep.endpoint("other") + "/stacks"
        roots = [proc.pid for proc in dep.procs.values()]

        def cpu():
            return procs.tree_cpu_seconds(roots)

        # What the service does by itself (heartbeats, watchdog), per s.
        cpu_idle = cpu()
        _none, idle = _cost(counters_dir, lambda: time.sleep(COUNT_SECONDS))
        idle["cpu"] = cpu() - cpu_idle
        idle = {k: v / idle["seconds"] for k, v in idle.items()}
        alone, cost = _cost(counters_dir, lambda: _latencies(other, SECONDS))
        spent = cost.pop("seconds")
        idle.pop("seconds")
        per_list = {
            k: (v - idle[k] * spent) / alone["n"] for k, v in cost.items()
        }
        result = {
            "alone": {
                "other_get_stacks_ms": alone,
                "per_get_stacks": {
                    k: round(v, 2) for k, v in per_list.items()
                },
                "loadavg": [round(x, 2) for x in os.getloadavg()],
            },
            "idle_service_per_s": {k: round(v, 2) for k, v in idle.items()},
        }
        label = "%d_pages_every_%gs" % (count, period)
        args = (base, other, counters_dir, int(count), period)
        result[label] = _phase(*args, False, idle)
        if legacy:
            result[label + "_legacy"] = _phase(*args, True, idle)
        if horizon:
            result["%d_horizon_tabs_every_%gs" % (count, period)] = (
                _horizon_phase(
                    dep, heat, count, period, args, idle, cpu, result["alone"]
                )
            )
        if weight:  # before --busy adds events to the page
            result["stack_page_weight"] = page_weight(dep, path)
        if busy:
            stop = threading.Event()
            churn = threading.Thread(
                target=_churn, args=(heat, stack_id, stop)
            )
            churn.start()
            try:
                result[label + "_stack_updating"] = _phase(*args, False, idle)
            finally:
                stop.set()
                churn.join()
        json.dump(result, sys.stdout, indent=1)
        print()
    finally:
        dep.stop()


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    numbers = [float(a) for a in sys.argv[1:] if not a.startswith("--")]
    main(
        *numbers[:2],
        legacy="--legacy" in flags,
        busy="--busy" in flags,
        weight="--weight" in flags,
        horizon="--horizon" in flags,
    )
