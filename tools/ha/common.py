"""Ports, waiting, HAProxy and measurements shared by the pieces.

Every piece listens on the substrate's service address (a bridge of its
own, see ``net``), never on the machine's loopback services, and on the
ports below: none is a default port of RabbitMQ (5672, 25672, epmd 4369),
PostgreSQL (5432), MariaDB (3306), etcd (2379/2380), Patroni (8008) or
Galera (4567/4568/4444), and all are below the kernel's ephemeral range.
"""

import os
import shutil
import socket
import subprocess
import time

from tools.minicloud import processes

BASE = 27000
RABBIT_AMQP = BASE + 10  # + node index (1-3)
RABBIT_DIST = BASE + 20  # + node index
RABBIT_EPMD = BASE + 30
ETCD_CLIENT = BASE + 40  # + member index
ETCD_PEER = BASE + 45  # + member index
PATRONI_REST = BASE + 50  # + node index
PATRONI_PG = BASE + 60  # + node index
GALERA_SQL = BASE + 70  # + node index
GALERA_GCOMM = BASE + 80  # + node index
GALERA_IST = BASE + 90  # + node index
GALERA_SST = BASE + 95  # + node index
LB_POSTGRES = BASE + 100  # HAProxy: the Patroni leader
LB_GALERA = BASE + 101  # HAProxy: Galera, single writer
LB_API = BASE + 102  # HAProxy: heat-lite-api of the three hosts
HOST_API = BASE + 110  # heat-lite-api inside each host namespace

StartFailed = processes.StartFailed


def wait(predicate, timeout, what, piece=None, names=()):
    """Poll ``predicate`` until true; fail early if a daemon exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in names:
            if not processes.alive(piece.pids[name]):
                raise StartFailed(
                    "%s exited:\n%s"
                    % (name, tail(piece.path("log", "%s.out" % name)))
                )
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001, S110 - not ready yet
            pass
        time.sleep(0.3)
    raise StartFailed("%s not ready within %d s" % (what, timeout))


def tail(path, size=3000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-size:]
    except OSError:
        return ""


def port_open(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def binary(name, *candidates):
    for path in (*candidates, shutil.which(name)):
        if path and os.path.exists(path):
            return path
    raise StartFailed(
        "%s is not installed (apt-get install -y patroni etcd-server "
        "haproxy galera-4 mariadb-server rabbitmq-server)" % name
    )


def haproxy(piece, name, body):
    """Run HAProxy in the foreground (``-db``) with ``body`` as its
    proxies; its PID is recorded like every daemon's. Servers are checked
    every second, down after 2 failed checks, up after 2 good ones."""
    cfg = piece.path("%s.cfg" % name)
    with open(cfg, "w") as f:
        f.write(
            "global\n"
            "    maxconn 2000\n"
            "defaults\n"
            "    mode tcp\n"
            "    timeout connect 2s\n"
            "    timeout client 1h\n"
            "    timeout server 1h\n"
            "    timeout check 2s\n"
            "    default-server inter 1s fall 2 rise 2\n" + body
        )
    processes.run(piece, name + "-check", [binary("haproxy"), "-c", "-f", cfg])
    return processes.spawn(piece, name, [binary("haproxy"), "-db", "-f", cfg])


def sudo_as(user):
    """Command prefix that runs a program as ``user`` (exec, no fork:
    the recorded PID is the program's)."""
    return [
        binary("setpriv"),
        "--reuid=%s" % user,
        "--regid=%s" % user,
        "--init-groups",
    ]


def group_members(pgid):
    """PIDs of the live processes in process group ``pgid`` and of all
    their descendants (a postmaster's backends make sessions of their
    own); zombies are left out."""
    parents, groups = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z":
            continue  # exited; its parent has not waited for it yet
        parents[int(entry)] = int(fields[1])
        groups[int(entry)] = int(fields[2])
    found = {pid for pid, group in groups.items() if group == pgid}
    grew = True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in found}
        grew = not more <= found
        found |= more
    return sorted(found)


def pgid_of(pid):
    """The process group of ``pid`` (None if it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[2])
    except (OSError, ValueError):
        return None


def rss_mb(pids):
    """Resident memory of ``pids`` in MiB (RSS; shared pages counted in
    each process, so a sum over forks overstates a little)."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024.0, 1)


def cpu_seconds(pids):
    """User + system CPU seconds used so far by ``pids`` (and their waited
    for children)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])
    return round(total / tick, 1)


def piece_status(piece):
    """{name: {"pid", "alive", "rss_mb"}} of the piece's daemons."""
    out = {}
    for name, pid in sorted(piece.pids.items()):
        out[name] = group_status(pid)
    return out


def group_status(pgid):
    members = group_members(pgid)
    return {
        "pid": pgid,
        "alive": bool(members),
        "processes": len(members),
        "rss_mb": rss_mb(members),
        "cpu_seconds": cpu_seconds(members),
    }


def run_quiet(argv, env=None, timeout=60):
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        timeout=timeout,
    )
