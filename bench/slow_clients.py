"""Slow request bodies against the API (issue 26): ``python -m
bench.slow_clients --label after [--seconds 60] [--out doc/bench]``.

``--connections`` (200) attacking connections are kept open against a
``heat-lite-all`` started with default options: each sends the head of a
``POST /v1/demo/stacks`` and part of its body (1 KB, 40 KB or 1 MB), then
either trickles one byte every ``--interval`` (10) seconds or stalls. A
connection the server closes or answers is opened again, so the pressure
stays for the whole run. The attackers bind to 127.0.0.2, 127.0.0.3, ...
(``--per-source`` connections each; Linux answers all of 127.0.0.0/8),
while a normal client on 127.0.0.1 sends ``GET /stacks`` every 0.2 s
with a 10 s timeout. Reports the normal client's latency (p50, p95, max,
failures) and the API process's RSS (before the attack, peak, end).

Writes ``slow_clients/<label>.json`` and renders every label found there
into ``slow_clients.md`` under ``--out``. The functional test
``tests/functional/test_api_slow_clients.py`` runs the same attack.
"""

import argparse
import collections
import errno
import glob
import json
import os
import selectors
import socket
import subprocess
import tempfile
import threading
import time

import requests

from bench import machine, stats

KB = 1000
SIZES = (KB, 40 * KB, 1000 * KB)
KINDS = ("trickle", "stall")
# What share of its body a connection sends before it trickles or stalls.
SHARES = {"trickle": 0.4, "stall": 0.5}
Spec = collections.namedtuple("Spec", "kind size source sent")


def plan(connections, per_source, sizes=SIZES, shares=None, first_source=2):
    """``connections`` Specs cycling through every (kind, size), bound to
    127.0.0.<first_source>, ... ``per_source`` at a time; ``shares``
    (default SHARES) says how much of its body each kind sends."""
    shares = shares or SHARES
    shapes = [(k, s) for s in sizes for k in KINDS]
    specs = []
    for i in range(connections):
        kind, size = shapes[i % len(shapes)]
        source = "127.0.0.%d" % (first_source + i // per_source)
        specs.append(Spec(kind, size, source, int(size * shares[kind])))
    return specs


def opening(spec, path="/v1/demo/stacks"):
    """What a connection of ``spec`` sends at once: a head that announces
    the whole body, and ``spec.sent`` bytes of it."""
    head = (
        "POST %s HTTP/1.1\r\nHost: heat\r\nContent-Type: application/json\r\n"
        "Content-Length: %d\r\n\r\n" % (path, spec.size)
    ).encode()
    return head + b'{"stack_name": "' + b"x" * (spec.sent - 16)


class _Open:
    __slots__ = ("spec", "sock", "pending", "next_byte")

    def __init__(self, spec, sock, pending):
        self.spec = spec
        self.sock = sock
        self.pending = memoryview(pending)
        self.next_byte = None


class Attack:
    """Keeps one connection per Spec open from one thread (see module
    doc); ``counts`` says what happened to them."""

    REOPEN_DELAY = 0.5

    def __init__(self, port, specs, interval=10.0, host="127.0.0.1"):
        self.address = (host, port)
        self.specs = specs
        self.interval = interval
        self.counts = collections.Counter()
        self.open_now = 0
        self._selector = selectors.DefaultSelector()
        self._reopen = []  # (when, spec)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._reopen = [(0.0, spec) for spec in self.specs]
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(10)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()
        self._selector.close()

    def _run(self):
        while not self._stop.is_set():
            now = time.monotonic()
            due = [spec for when, spec in self._reopen if when <= now]
            self._reopen = [(w, s) for w, s in self._reopen if w > now]
            for spec in due:
                self._connect(spec)
            for key, events in self._selector.select(0.1):
                self._event(key.data, events)
            self._trickle(time.monotonic())
            self.open_now = len(self._selector.get_map())

    def _connect(self, spec):
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.bind((spec.source, 0))
            err = sock.connect_ex(self.address)
        except OSError as exc:
            err = exc.errno
        if err not in (0, errno.EINPROGRESS):
            self.counts["connect failed"] += 1
            sock.close()
            self._reopen.append((time.monotonic() + self.REOPEN_DELAY, spec))
            return
        self.counts["opened"] += 1
        conn = _Open(spec, sock, opening(spec))
        self._selector.register(
            sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn
        )

    def _event(self, conn, events):
        if events & selectors.EVENT_READ:
            self._read(conn)
        elif events & selectors.EVENT_WRITE:
            self._send(conn)

    def _send(self, conn):
        try:
            sent = conn.sock.send(conn.pending)
        except BlockingIOError:
            return
        except OSError:
            self._closed(conn, "reset while sending")
            return
        self.counts["bytes sent"] += sent
        conn.pending = conn.pending[sent:]
        if not conn.pending:
            self._selector.modify(conn.sock, selectors.EVENT_READ, conn)
            if conn.spec.kind == "trickle":
                conn.next_byte = time.monotonic() + self.interval

    def _read(self, conn):
        try:
            data = conn.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = None
        if data:
            status = data.split(b" ", 2)[1:2]
            self._closed(conn, "answered %s" % b"".join(status).decode())
        else:
            self._closed(conn, "closed" if data == b"" else "reset")

    def _closed(self, conn, how):
        self.counts[how] += 1
        self._selector.unregister(conn.sock)
        conn.sock.close()
        self._reopen.append((time.monotonic() + self.REOPEN_DELAY, conn.spec))

    def _trickle(self, now):
        for key in list(self._selector.get_map().values()):
            conn = key.data
            if conn.next_byte is None or conn.next_byte > now:
                continue
            conn.next_byte = now + self.interval
            try:
                self.counts["bytes sent"] += conn.sock.send(b"x")
            except BlockingIOError:
                pass
            except OSError:
                self._closed(conn, "reset while sending")


class Probe:
    """A normal client: ``GET url`` every ``pause`` seconds, each on a new
    connection from 127.0.0.1; ``latencies`` (seconds) and ``failures``."""

    def __init__(self, url, timeout=10.0, pause=0.2):
        self.url = url
        self.timeout = timeout
        self.pause = pause
        self.latencies = []
        self.failures = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(self.timeout + 5)

    def _run(self):
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                status = requests.get(
                    self.url, headers=HEADERS, timeout=self.timeout
                ).status_code
            except requests.RequestException as exc:
                status = type(exc).__name__
            self.latencies.append(time.monotonic() - start)
            if status != 200:
                self.failures[str(status)] += 1
            self._stop.wait(self.pause)


HEADERS = {"X-Auth-User": "normal"}


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def summary(probe):
    lat = sorted(probe.latencies)
    return {
        "requests": len(lat),
        "failures": dict(probe.failures),
        "p50_s": round(stats.percentile(lat, 50), 3) if lat else None,
        "p95_s": round(stats.percentile(lat, 95), 3) if lat else None,
        "max_s": round(max(lat), 3) if lat else None,
    }


def attack(port, pid, seconds, specs, interval):
    """Run the attack and the probe for ``seconds``; the figures."""
    url = "http://127.0.0.1:%d/v1/demo/stacks" % port
    rss_before = rss_kb(pid)
    opened = Attack(port, specs, interval).start()
    probe = Probe(url).start()
    peak, held = rss_before, []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(1)
        peak = max(peak, rss_kb(pid))
        held.append(opened.open_now)
    probe.stop()
    opened.stop()
    return {
        "normal_client": summary(probe),
        "rss_mb": {
            "before": round(rss_before / 1024, 1),
            "peak": round(peak / 1024, 1),
            "end": round(rss_kb(pid) / 1024, 1),
        },
        "attack": dict(opened.counts, held_min=min(held), held_max=max(held)),
    }


def _start(workdir):
    from harness.deployment import Deployment

    return Deployment("sqlite", workdir).start()


def _revision():
    """BENCH_REVISION if set (e.g. the code measured is not HEAD's), else
    the checkout's commit."""
    if os.environ.get("BENCH_REVISION"):
        return os.environ["BENCH_REVISION"]
    try:
        return subprocess.check_output(
            ["git", "rev-parse", "--short", "HEAD"], text=True
        ).strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


_HEADER = [
    "# Slow request bodies (issue 26)",
    "",
    "`python -m bench.slow_clients --label L`: heat-lite-all with "
    "default options (16 threads, client_socket_timeout 30); 200 "
    "connections from 127.0.0.2-5 send a POST's head and 40 % (then "
    "one byte every 10 s) or a share (then nothing; half unless the "
    "bodies column says) of a body of the sizes in the bodies column, "
    "and are opened again when the server closes them; a "
    "normal client on 127.0.0.1 sends GET /stacks every 0.2 s (10 s "
    "timeout). Its latency over the 60 s, and the process's RSS "
    "(before the attack, peak, end). The machine is shared: the load "
    "average (1 min) is beside each run.",
    "",
    "*before*: a body past 32 KiB got a worker thread, each further "
    "read with its own 30 s timeout, so the 16 threads were all "
    "reading attackers' bodies. *after*: a request gets a thread only "
    "once its whole body is there; a body past 32 KiB is read by the "
    "gate into memory its Content-Length reserved from "
    "`[api] max_request_buffer_size` (64 MiB; the rest wait unread), "
    "which bounds the RSS it adds (the kernel's socket buffers held "
    "them before).",
    "",
    "| label | code | bodies | load before / after | requests | failures "
    "| p50 s | p95 s | max s | RSS MB before / peak / end | attack |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]


def _bodies(result):
    sizes = ", ".join(
        "%g KB" % (int(s) / KB) for s in result["sizes"].split(",")
    )
    if result["stall_share"] != SHARES["stall"]:
        sizes += " (stall after %g %%)" % (100 * result["stall_share"])
    return sizes


def render(out):
    rows = []
    for path in glob.glob(os.path.join(out, "slow_clients", "*.json")):
        with open(path) as f:
            rows.append(json.load(f))
    rows.sort(key=lambda r: (r["sizes"], not r["label"].startswith("before")))
    lines = list(_HEADER)
    for r in rows:
        n, m = r["normal_client"], r["rss_mb"]
        cells = [
            r["label"],
            r["revision"],
            _bodies(r),
            "%s / %s" % (r["load_before"][0], r["load_after"][0]),
            n["requests"],
            n["failures"] or 0,
            n["p50_s"],
            n["p95_s"],
            n["max_s"],
            "%s / %s / %s" % (m["before"], m["peak"], m["end"]),
            ", ".join("%s %s" % kv for kv in sorted(r["attack"].items())),
        ]
        lines.append("| %s |" % " | ".join(str(c) for c in cells))
    with open(os.path.join(out, "slow_clients.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _options(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--per-source", type=int, default=50)
    parser.add_argument("--interval", type=float, default=10)
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in SIZES),
        help="body sizes, bytes (comma-separated)",
    )
    parser.add_argument(
        "--stall-share",
        type=float,
        default=SHARES["stall"],
        help="share of its body a stalling connection sends",
    )
    parser.add_argument("--out", default="doc/bench")
    return parser.parse_args(argv)


def main(argv=None):
    args = _options(argv)
    specs = plan(
        args.connections,
        args.per_source,
        [int(s) for s in args.sizes.split(",")],
        dict(SHARES, stall=args.stall_share),
    )
    with tempfile.TemporaryDirectory() as workdir:
        dep = _start(workdir)
        try:
            load_before = machine.load_average()
            result = attack(
                dep.port,
                dep.procs["all"].pid,
                args.seconds,
                specs,
                args.interval,
            )
        finally:
            dep.stop()
    result.update(
        label=args.label,
        revision=_revision(),
        load_before=load_before,
        load_after=machine.load_average(),
        seconds=args.seconds,
        sizes=args.sizes,
        stall_share=args.stall_share,
    )
    os.makedirs(os.path.join(args.out, "slow_clients"), exist_ok=True)
    with open(
        os.path.join(args.out, "slow_clients", args.label + ".json"), "w"
    ) as f:
        json.dump(result, f, indent=1, sort_keys=True)
    render(args.out)
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
