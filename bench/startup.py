"""``python -m bench --startup``: how long the README's quick start takes
to serve.

``heat-lite-all`` is started as a newcomer starts it, with no config file
and an empty HOME (so a new SQLite file is migrated and stevedore builds
its entry-point cache), and timed from ``exec`` to the first answer of
``GET /``; its CPU time up to then is read from ``/proc``. Each start gets
a new HOME and its own port. The figures are medians over the starts,
with the load average beside them: on a busy machine the wall time says
more about the neighbours than about heat_lite.
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)


def cpu_seconds(pid):
    """CPU time (user + system) the process ``pid`` has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        # The fields after the command name, which may hold spaces.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_http(port, proc, timeout=30):
    """Seconds until ``GET /`` on ``port`` answers, or None if ``proc``
    exits or ``timeout`` passes first."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            return None
        try:
            with socket.create_connection(
                ("127.0.0.1", port), timeout=1
            ) as sock:
                sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
                if sock.recv(12).startswith(b"HTTP/1."):
                    return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.02)
    return None


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_once(workdir):
    """One quick start: {"wall_s", "cpu_s"} (wall None if it never served)."""
    home = tempfile.mkdtemp(prefix="home-", dir=workdir)
    port = _free_port()
    conf = os.path.join(home, "port.conf")
    with open(conf, "w") as f:
        f.write("[api]\nbind_port = %d\n" % port)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
    with open(os.path.join(home, "all.log"), "wb") as log:
        proc = subprocess.Popen(
            [os.path.join(BIN, "heat-lite-all"), "--config-file", conf],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            wall = wait_http(port, proc)
            cpu = cpu_seconds(proc.pid) if proc.poll() is None else None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
                proc.wait(timeout=30)
    return {"wall_s": wall, "cpu_s": cpu}


def main(opts, starts=5):
    os.makedirs(opts.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="heat-lite-startup-")
    load_before = os.getloadavg()
    try:
        runs = [start_once(workdir) for _ in range(starts)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    walls = [r["wall_s"] for r in runs if r["wall_s"] is not None]
    cpus = [r["cpu_s"] for r in runs if r["cpu_s"] is not None]
    from bench import cli

    data = {
        "revision": cli.revision(),
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "runs": runs,
        "wall_median_s": statistics.median(walls) if walls else None,
        "cpu_median_s": statistics.median(cpus) if cpus else None,
    }
    with open(os.path.join(opts.out, "startup.json"), "w") as f:
        json.dump(data, f, indent=2)
    lines = [
        "# Quick start: heat-lite-all with no config and an empty HOME",
        "",
        "heat_lite %s; %d cores; load average before %s, after %s."
        % (
            data["revision"],
            data["cpus"],
            " ".join("%.2f" % x for x in load_before),
            " ".join("%.2f" % x for x in data["load_after"]),
        ),
        "",
        "| start | seconds to serve | CPU seconds |",
        "|---|---|---|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            "| %d | %s | %s |"
            % (
                i,
                "-" if r["wall_s"] is None else "%.2f" % r["wall_s"],
                "-" if r["cpu_s"] is None else "%.2f" % r["cpu_s"],
            )
        )
    lines.append(
        "| median | %s | %s |"
        % (
            "-" if not walls else "%.2f" % data["wall_median_s"],
            "-" if not cpus else "%.2f" % data["cpu_median_s"],
        )
    )
    with open(os.path.join(opts.out, "startup.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if len(walls) == len(runs) else 1
