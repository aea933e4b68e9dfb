"""A 3-node MariaDB Galera cluster, used single-writer through HAProxy.

Three ``mariadbd`` (Debian's mariadb-server with galera-4), each with its
own datadir, port, socket and Galera ports on the service address, run
as the mysql user (rsync SST then writes as that user too) with
``--no-defaults`` (none of the machine's /etc/mysql settings, nor its
server on 3306). Node 1 is initialised with
``mariadb-install-db`` and bootstraps the cluster (``--wsrep-new-cluster``);
nodes 2 and 3 join it and receive a full copy by rsync SST. HAProxy sends
every connection to node 1 while its check passes, and to node 2 (then
3) otherwise — one writer at a time, as operators run Galera to avoid
certification conflicts.
"""

import os
import pwd
import shutil

from tools.ha import common
from tools.minicloud import processes

NODES = 3
PROVIDER = "/usr/lib/galera/libgalera_smm.so"


def _argv(piece, i, bootstrap=False):
    ip = piece.data["service_ip"]
    base = piece.path("n%d" % i)
    cluster = ",".join(
        "%s:%d" % (ip, common.GALERA_GCOMM + n) for n in range(1, NODES + 1)
    )
    provider_options = (
        "gmcast.listen_addr=tcp://%s:%d; ist.recv_addr=%s:%d; "
        "evs.suspect_timeout=PT3S; evs.inactive_timeout=PT6S; "
        "gcache.size=64M"
        % (ip, common.GALERA_GCOMM + i, ip, common.GALERA_IST + i)
    )
    argv = [
        common.binary("mariadbd", "/usr/sbin/mariadbd"),
        "--no-defaults",
        "--datadir=%s" % os.path.join(base, "data"),
        "--port=%d" % (common.GALERA_SQL + i),
        "--bind-address=%s" % ip,
        "--socket=%s" % os.path.join(base, "mysqld.sock"),
        "--pid-file=%s" % os.path.join(base, "mariadb.pid"),
        "--log-error=%s" % os.path.join(base, "error.log"),
        "--user=mysql",
        "--skip-name-resolve",
        "--innodb-buffer-pool-size=64M",
        "--innodb-flush-log-at-trx-commit=0",
        "--innodb-autoinc-lock-mode=2",
        "--max-connections=300",
        "--binlog-format=ROW",
        "--default-storage-engine=InnoDB",
        "--wsrep-on=ON",
        "--wsrep-provider=%s" % PROVIDER,
        "--wsrep-cluster-name=%s" % piece.prefix,
        "--wsrep-cluster-address=gcomm://%s" % cluster,
        "--wsrep-node-name=galera%d" % i,
        "--wsrep-node-address=%s:%d" % (ip, common.GALERA_GCOMM + i),
        "--wsrep-provider-options=%s" % provider_options,
        "--wsrep-sst-method=rsync",
        "--wsrep-sst-receive-address=%s:%d" % (ip, common.GALERA_SST + i),
    ]
    if bootstrap:
        argv.append("--wsrep-new-cluster")
    return argv


def connect(piece, i, **kwargs):
    """root on node i's socket (root@'%' exists only once node 1 ran
    ``_grant_remote``)."""
    import pymysql

    return pymysql.connect(
        unix_socket=piece.path("n%d" % i, "mysqld.sock"),
        user="root",
        connect_timeout=2,
        read_timeout=5,
        **kwargs,
    )


def wsrep(piece, i):
    """{variable: value} of node i's wsrep status (empty if down)."""
    try:
        conn = connect(piece, i)
    except Exception:  # noqa: BLE001 - down
        return {}
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW STATUS LIKE 'wsrep_%'")
            return dict(cur.fetchall())
    finally:
        conn.close()


def _synced(piece, i, size=None):
    state = wsrep(piece, i)
    return state.get("wsrep_local_state_comment") == "Synced" and (
        size is None or int(state.get("wsrep_cluster_size", 0)) >= size
    )


def start_node(piece, i, bootstrap=False, size=None):
    """Start (or restart) node ``i`` and wait until it is Synced."""
    name = "galera%d" % i
    processes.spawn(piece, name, _argv(piece, i, bootstrap))
    common.wait(
        lambda: _synced(piece, i, size), 300, name + " synced", piece, [name]
    )


def _grant_remote(piece):
    """root may connect from the hosts' addresses; HAProxy checks as
    ``haproxy`` (no password, no privileges). Replicated by Galera."""
    conn = connect(piece, 1, autocommit=True)
    with conn.cursor() as cur:
        for sql in (
            "CREATE USER IF NOT EXISTS 'root'@'%'",
            "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION",
            "CREATE USER IF NOT EXISTS 'haproxy'@'%'",
        ):
            cur.execute(sql)
    conn.close()


def _chown(top, user):
    entry = pwd.getpwnam(user)
    for where, dirs, files in os.walk(top):
        for name in (where, *(os.path.join(where, n) for n in dirs + files)):
            os.chown(name, entry.pw_uid, entry.pw_gid)


def up(piece, service_ip):
    if piece.pids:
        return piece.data
    for i in range(1, NODES + 1):
        shutil.rmtree(piece.path("n%d" % i), ignore_errors=True)
    piece.data = {"service_ip": service_ip}
    piece.save()
    for i in range(1, NODES + 1):
        os.makedirs(piece.path("n%d" % i, "data"), exist_ok=True)
        _chown(piece.path("n%d" % i), "mysql")
    processes.run(
        piece,
        "install-db",
        [
            common.binary("mariadb-install-db"),
            "--no-defaults",
            "--datadir=%s" % piece.path("n1", "data"),
            "--user=mysql",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
    )
    start_node(piece, 1, bootstrap=True)
    _grant_remote(piece)
    for i in range(2, NODES + 1):
        start_node(piece, i, size=i)
    servers = "".join(
        "    server galera%d %s:%d check%s\n"
        % (
            i,
            service_ip,
            common.GALERA_SQL + i,
            "" if i == 1 else " backup",
        )
        for i in range(1, NODES + 1)
    )
    common.haproxy(
        piece,
        "haproxy",
        "listen galera\n"
        "    bind %s:%d\n"
        # A writer marked down loses its sessions (clients reconnect to
        # the next one); when node 1 is back, the backup's sessions are
        # closed too, so that there is one writer again.
        "    default-server inter 1s fall 2 rise 2 "
        "on-marked-down shutdown-sessions "
        "on-marked-up shutdown-backup-sessions\n"
        "    option mysql-check user haproxy\n"
        % (service_ip, common.LB_GALERA)
        + servers,
    )
    common.wait(
        lambda: connect_lb(piece).close() or True,
        30,
        "galera through haproxy",
        piece,
        ["haproxy"],
    )
    piece.data["url"] = "mysql+pymysql://root@%s:%d/%%s?charset=utf8mb4" % (
        service_ip,
        common.LB_GALERA,
    )
    piece.save()
    return piece.data


def connect_lb(piece, **kwargs):
    import pymysql

    return pymysql.connect(
        host=piece.data["service_ip"],
        port=common.LB_GALERA,
        user="root",
        connect_timeout=2,
        **kwargs,
    )


def create_database(piece, name):
    """Make database ``name`` (through the writer); its SQLAlchemy URL."""
    conn = connect_lb(piece, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(
            "CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4" % name
        )
    conn.close()
    return piece.data["url"] % name


def down(piece):
    processes.stop_all(piece, timeout=60)
    piece.forget()


def status(piece):
    out = {"daemons": common.piece_status(piece)}
    for i in range(1, NODES + 1):
        state = wsrep(piece, i) if piece.pids else {}
        out["galera%d" % i] = {
            key: state.get("wsrep_" + key)
            for key in ("local_state_comment", "cluster_size", "ready")
        }
    return out
