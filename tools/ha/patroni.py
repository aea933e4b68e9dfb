"""PostgreSQL primary + streaming standby with automatic failover.

Debian's packages: a 3-member etcd cluster (the DCS; three so that
losing one member is not losing the leader lock) and two Patroni
daemons, each managing a PostgreSQL 15 data directory of its own on the
service address. Patroni runs as the postgres user (``setpriv``, which
execs, so the recorded PID is Patroni's). It bootstraps node 1 as the
primary, clones node 2 with pg_basebackup as a streaming replica, and
when the primary goes away promotes the replica once the leader key
expires (``ttl``).

heat_lite reaches the primary either through a multi-host libpq URL
(``host=A:p1&host=B:p2&target_session_attrs=read-write``: psycopg2 tries
each and keeps the one that accepts writes) or through HAProxy, which
checks Patroni's REST API (``GET /primary`` answers 200 on the leader
only). ``data["url"]`` is the former, ``data["lb_url"]`` the latter.

Patroni starts the postmaster in a session of its own (it survives
Patroni's death by design), so ``down`` stops Patroni by PID and then
any postmaster still named in a data directory's ``postmaster.pid``.
"""

import os
import pwd
import shutil
import signal
import time

import requests

from tools.ha import common
from tools.minicloud import processes

NODES = 2
ETCD_MEMBERS = 3
PG_BIN = "/usr/lib/postgresql/15/bin"
SUPERUSER_PASSWORD = "heat-lite-ha"  # noqa: S105 - loopback test cluster


def _etcd_argv(piece, i):
    ip = piece.data["service_ip"]
    cluster = ",".join(
        "etcd%d=http://%s:%d" % (n, ip, common.ETCD_PEER + n)
        for n in range(1, ETCD_MEMBERS + 1)
    )
    return [
        common.binary("etcd"),
        "--name=etcd%d" % i,
        "--data-dir=%s" % piece.path("etcd%d" % i),
        "--listen-client-urls=http://%s:%d" % (ip, common.ETCD_CLIENT + i),
        "--advertise-client-urls=http://%s:%d" % (ip, common.ETCD_CLIENT + i),
        "--listen-peer-urls=http://%s:%d" % (ip, common.ETCD_PEER + i),
        "--initial-advertise-peer-urls=http://%s:%d"
        % (ip, common.ETCD_PEER + i),
        "--initial-cluster=%s" % cluster,
        "--initial-cluster-token=%s" % piece.prefix,
        "--initial-cluster-state=new",
        "--listen-metrics-urls=",
        "--log-level=warn",
        "--logger=zap",
        # Small: a test cluster's DCS holds a few keys.
        "--quota-backend-bytes=104857600",
        "--auto-compaction-retention=1",
    ]


def _patroni_yaml(piece, i):
    ip = piece.data["service_ip"]
    data_dir = piece.path("pg%d" % i, "data")
    etcd_hosts = ",".join(
        "%s:%d" % (ip, common.ETCD_CLIENT + n)
        for n in range(1, ETCD_MEMBERS + 1)
    )
    trusted = (
        "  - local all all trust\n"
        "  - host all all 127.0.0.1/32 trust\n"
        "  - host all all 10.243.0.0/16 trust\n"
        "  - host all all 10.241.0.0/16 trust\n"
        "  - host replication replicator 10.243.0.0/16 trust\n"
    )
    return (
        "scope: %(scope)s\n"
        "name: pg%(i)d\n"
        "log:\n"
        "  level: WARNING\n"
        "restapi:\n"
        "  listen: %(ip)s:%(rest)d\n"
        "  connect_address: %(ip)s:%(rest)d\n"
        "etcd3:\n"
        "  hosts: %(etcd)s\n"
        "bootstrap:\n"
        "  dcs:\n"
        # The leader key lives 10 s: a primary that stops renewing it is
        # replaced after at most that (plus one loop).
        "    ttl: 10\n"
        "    loop_wait: 2\n"
        "    retry_timeout: 4\n"
        "    maximum_lag_on_failover: 1048576\n"
        "    postgresql:\n"
        "      use_pg_rewind: true\n"
        "      parameters:\n"
        "        max_connections: 300\n"
        "        wal_level: replica\n"
        "        hot_standby: 'on'\n"
        "        wal_log_hints: 'on'\n"
        "        max_wal_senders: 5\n"
        "        max_replication_slots: 5\n"
        "  initdb:\n"
        "  - encoding: UTF8\n"
        "  - auth: trust\n"
        "  pg_hba:\n%(trusted)s"
        "postgresql:\n"
        "  listen: %(ip)s:%(pg)d\n"
        "  connect_address: %(ip)s:%(pg)d\n"
        "  data_dir: %(data)s\n"
        "  bin_dir: %(bin)s\n"
        "  pgpass: %(pgpass)s\n"
        "  authentication:\n"
        "    superuser:\n"
        "      username: postgres\n"
        "      password: %(password)s\n"
        "    replication:\n"
        "      username: replicator\n"
        "      password: %(password)s\n"
        "  parameters:\n"
        "    unix_socket_directories: '%(sock)s'\n"
        "    shared_buffers: 32MB\n"
        "    fsync: 'off'\n"
        "    synchronous_commit: 'off'\n"
        "    full_page_writes: 'on'\n"
        "  pg_hba:\n%(trusted)s"
        "tags:\n"
        "  nofailover: false\n"
        "  noloadbalance: false\n"
        % {
            "scope": piece.prefix,
            "i": i,
            "ip": ip,
            "rest": common.PATRONI_REST + i,
            "pg": common.PATRONI_PG + i,
            "etcd": etcd_hosts,
            "data": data_dir,
            "bin": PG_BIN,
            "pgpass": piece.path("pg%d" % i, "pgpass"),
            "password": SUPERUSER_PASSWORD,
            "sock": piece.path("pg%d" % i),
            "trusted": trusted,
        }
    )


def _etcd_healthy(piece, i):
    ip = piece.data["service_ip"]
    return (
        requests.get(
            "http://%s:%d/health" % (ip, common.ETCD_CLIENT + i), timeout=2
        ).status_code
        == 200
    )


def rest(piece, i, path):
    """Status code of Patroni node i's ``GET path`` (0 if it is down)."""
    ip = piece.data["service_ip"]
    try:
        return requests.get(
            "http://%s:%d/%s" % (ip, common.PATRONI_REST + i, path), timeout=2
        ).status_code
    except requests.RequestException:
        return 0


def leader(piece):
    """The index of the node that is primary now, or None."""
    for i in range(1, NODES + 1):
        if rest(piece, i, "primary") == 200:
            return i
    return None


def start_node(piece, i):
    name = "patroni%d" % i
    processes.spawn(
        piece,
        name,
        [
            *common.sudo_as("postgres"),
            common.binary("patroni"),
            piece.path("patroni%d.yml" % i),
        ],
    )
    return name


def _check_reachable(path):
    """Patroni runs as postgres: every directory above ``path`` must let
    others through (pytest's and mkdtemp's 0700 directories do not)."""
    path = os.path.abspath(path)
    while path != "/":
        path = os.path.dirname(path)
        if not os.stat(path).st_mode & 0o001:
            raise common.StartFailed(
                "%s is not searchable by the postgres user (mode 0700?): "
                "choose a --dir under a directory others may enter" % path
            )


def up(piece, service_ip):
    if piece.pids:
        return piece.data
    _check_reachable(piece.dir)
    if os.path.isdir(piece.dir):
        for entry in os.listdir(piece.dir):
            if entry.startswith(("etcd", "pg")):
                shutil.rmtree(piece.path(entry), ignore_errors=True)
    piece.data = {"service_ip": service_ip}
    piece.save()
    for i in range(1, ETCD_MEMBERS + 1):
        processes.spawn(piece, "etcd%d" % i, _etcd_argv(piece, i))
    for i in range(1, ETCD_MEMBERS + 1):
        common.wait(
            lambda i=i: _etcd_healthy(piece, i),
            60,
            "etcd%d" % i,
            piece,
            ["etcd%d" % i],
        )
    postgres = pwd.getpwnam("postgres")
    for i in range(1, NODES + 1):
        os.makedirs(piece.path("pg%d" % i), mode=0o700, exist_ok=True)
        os.chown(piece.path("pg%d" % i), postgres.pw_uid, postgres.pw_gid)
        with open(piece.path("patroni%d.yml" % i), "w") as f:
            f.write(_patroni_yaml(piece, i))
    name = start_node(piece, 1)
    common.wait(
        lambda: rest(piece, 1, "primary") == 200,
        120,
        "pg1 primary",
        piece,
        [name],
    )
    for i in range(2, NODES + 1):
        name = start_node(piece, i)
        common.wait(
            lambda i=i: rest(piece, i, "replica") == 200,
            180,
            "pg%d streaming replica" % i,
            piece,
            [name],
        )
    servers = "".join(
        "    server pg%d %s:%d check port %d\n"
        % (i, service_ip, common.PATRONI_PG + i, common.PATRONI_REST + i)
        for i in range(1, NODES + 1)
    )
    common.haproxy(
        piece,
        "haproxy",
        "listen postgres\n"
        "    bind %s:%d\n"
        "    default-server inter 1s fall 2 rise 2 "
        "on-marked-down shutdown-sessions\n"
        "    option httpchk GET /primary\n"
        "    http-check expect status 200\n"
        % (service_ip, common.LB_POSTGRES)
        + servers,
    )
    hosts = "&".join(
        "host=%s:%d" % (service_ip, common.PATRONI_PG + i)
        for i in range(1, NODES + 1)
    )
    piece.data["url"] = (
        "postgresql+psycopg2://postgres:%s@/%%s?%s"
        "&target_session_attrs=read-write&connect_timeout=3"
        % (SUPERUSER_PASSWORD, hosts)
    )
    piece.data["lb_url"] = "postgresql+psycopg2://postgres:%s@%s:%d/%%s" % (
        SUPERUSER_PASSWORD,
        service_ip,
        common.LB_POSTGRES,
    )
    piece.save()
    common.wait(
        lambda: _psql(piece, "lb_url", "postgres", "SELECT 1") is not None,
        30,
        "postgres through haproxy",
        piece,
        ["haproxy"],
    )
    return piece.data


def _psql(piece, which, database, sql, autocommit=False):
    """Run ``sql`` over the piece's ``url`` or ``lb_url``; the first row."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(
        piece.data[which] % database,
        isolation_level="AUTOCOMMIT" if autocommit else None,
        poolclass=sqlalchemy.pool.NullPool,
    )
    try:
        with engine.connect() as conn:
            result = conn.exec_driver_sql(sql)
            return result.first() if result.returns_rows else ()
    finally:
        engine.dispose()


def create_database(piece, name):
    """Make database ``name`` on the primary; its multi-host URL."""
    exists = _psql(
        piece,
        "url",
        "postgres",
        "SELECT 1 FROM pg_database WHERE datname = '%s'" % name,
    )
    if not exists:
        _psql(piece, "url", "postgres", "CREATE DATABASE %s" % name, True)
    return piece.data["url"] % name


def _postmasters(piece):
    """PIDs in the nodes' ``postmaster.pid`` that still run postgres."""
    found = []
    for i in range(1, NODES + 1):
        data = piece.path("pg%d" % i, "data")
        try:
            with open(os.path.join(data, "postmaster.pid")) as f:
                pid = int(f.readline())
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if data.encode() not in f.read():
                    continue
        except (OSError, ValueError):
            continue
        found.append(pid)
    return found


def down(piece):
    processes.stop_all(piece, timeout=60)
    pids = _postmasters(piece)
    for pid in pids:
        os.kill(pid, signal.SIGINT)  # fast shutdown; backends follow
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(map(processes.alive, pids)):
        time.sleep(0.2)
    for pid in pids:
        if processes.alive(pid):
            os.kill(pid, signal.SIGKILL)
    piece.forget()


def status(piece):
    out = {"daemons": common.piece_status(piece)}
    for pid in _postmasters(piece):
        # Its session is one of Patroni's making, not the postmaster's.
        pgid = common.pgid_of(pid)
        if pgid:
            out["daemons"]["postgres-%d" % pid] = common.group_status(pgid)
    if piece.pids:
        out["primary"] = leader(piece)
        out["url"] = piece.data.get("url")
        out["lb_url"] = piece.data.get("lb_url")
    return out
