"""A 3-node RabbitMQ cluster with quorum queues.

Three ``rabbitmq-server`` nodes (Debian's package, the script under
/usr/lib/rabbitmq/bin run as root, not /usr/sbin's wrapper that switches
to the machine's rabbitmq user and settings), each with its own node
name, AMQP and distribution ports, mnesia and log directories and
config, registered with an epmd of this substrate's own on 127.0.0.1
(never the machine's on 4369). ``HOME`` is shared, so they share one
Erlang cookie. Nodes 2 and 3 join node 1 with ``rabbitmqctl
join_cluster``. heat_lite names all three in its transport URL and
declares its queues as quorum queues (``rabbit_quorum_queue``).
"""

import os
import secrets
import shutil

from tools.ha import common
from tools.minicloud import processes

NODES = 3
SCRIPTS = "/usr/lib/rabbitmq/bin"


def _node(piece, i):
    return "hlha%d_%s@localhost" % (i, piece.prefix.split("-")[0])


def _env(piece, i):
    base = piece.path("n%d" % i)
    return {
        "HOME": piece.dir,
        "RABBITMQ_NODENAME": _node(piece, i),
        "RABBITMQ_NODE_PORT": str(common.RABBIT_AMQP + i),
        "RABBITMQ_DIST_PORT": str(common.RABBIT_DIST + i),
        "ERL_EPMD_PORT": str(common.RABBIT_EPMD),
        "ERL_EPMD_ADDRESS": "127.0.0.1",
        "RABBITMQ_CONF_ENV_FILE": os.path.join(base, "rabbitmq-env.conf"),
        "RABBITMQ_CONFIG_FILE": os.path.join(base, "rabbitmq.conf"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": os.path.join(base, "enabled_plugins"),
        "RABBITMQ_MNESIA_BASE": os.path.join(base, "mnesia"),
        "RABBITMQ_LOG_BASE": os.path.join(base, "log"),
        "RABBITMQ_PID_FILE": os.path.join(base, "rabbit.pid"),
        "RABBITMQ_LOGS": "-",
        # Distribution (node to node, and rabbitmqctl) on loopback only.
        "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": (
            "-kernel inet_dist_use_interface {127,0,0,1}"
        ),
        "ERL_FLAGS": "",
    }


def _write_node_config(piece, i, service_ip):
    base = piece.path("n%d" % i)
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "rabbitmq.conf"), "w") as f:
        # guest may connect from the hosts' addresses; a small disk must
        # not block publishers; a partitioned minority pauses (the
        # operators' choice for a 3-node cluster).
        f.write(
            "loopback_users = none\n"
            "disk_free_limit.absolute = 1MB\n"
            "listeners.tcp.default = %s:%d\n"
            "cluster_partition_handling = pause_minority\n"
            % (service_ip, common.RABBIT_AMQP + i)
        )
    with open(os.path.join(base, "enabled_plugins"), "w") as f:
        f.write("[].\n")
    open(os.path.join(base, "rabbitmq-env.conf"), "w").close()


def ctl(piece, i, *args, timeout=120):
    """``rabbitmqctl -n <node i> ARGS``; the completed process."""
    return common.run_quiet(
        [os.path.join(SCRIPTS, "rabbitmqctl"), "-n", _node(piece, i), *args],
        env=_env(piece, i),
        timeout=timeout,
    )


def _ctl_ok(piece, i, *args):
    result = ctl(piece, i, *args)
    if result.returncode != 0:
        raise common.StartFailed(
            "rabbitmqctl %s on node %d failed:\n%s%s"
            % (" ".join(args), i, result.stdout, result.stderr)
        )
    return result.stdout


def _amqp_ready(host, port):
    import amqp

    conn = amqp.Connection(
        "%s:%d" % (host, port),
        userid="guest",
        password="guest",
        connect_timeout=2,
    )
    try:
        conn.connect()
        return True
    finally:
        try:
            conn.collect()
        except Exception:  # noqa: BLE001, S110 - best effort
            pass


def start_node(piece, i):
    """Start (or restart, after a kill) node ``i``; wait until it serves."""
    name = "rabbit%d" % i
    processes.spawn(
        piece, name, [os.path.join(SCRIPTS, "rabbitmq-server")], _env(piece, i)
    )
    ip = piece.data["service_ip"]
    common.wait(
        lambda: _amqp_ready(ip, common.RABBIT_AMQP + i),
        180,
        name,
        piece,
        [name],
    )


def up(piece, service_ip):
    if piece.pids:
        return piece.data
    for i in range(1, NODES + 1):
        shutil.rmtree(piece.path("n%d" % i), ignore_errors=True)
    piece.data = {"service_ip": service_ip}
    piece.save()
    cookie = os.path.join(piece.dir, ".erlang.cookie")
    if os.path.exists(cookie):
        os.unlink(cookie)
    with open(cookie, "w") as f:
        f.write(secrets.token_hex(20))
    os.chmod(cookie, 0o400)
    processes.spawn(
        piece,
        "epmd",
        [
            common.binary("epmd"),
            "-port",
            str(common.RABBIT_EPMD),
            "-address",
            "127.0.0.1",
        ],
    )
    common.wait(
        lambda: common.port_open("127.0.0.1", common.RABBIT_EPMD),
        30,
        "epmd",
        piece,
        ["epmd"],
    )
    for i in range(1, NODES + 1):
        _write_node_config(piece, i, service_ip)
        start_node(piece, i)
    for i in range(2, NODES + 1):
        _ctl_ok(piece, i, "stop_app")
        _ctl_ok(piece, i, "join_cluster", _node(piece, 1))
        _ctl_ok(piece, i, "start_app")
    piece.data["transport_url"] = transport_url(service_ip)
    piece.data["nodes"] = [_node(piece, i) for i in range(1, NODES + 1)]
    piece.save()
    return piece.data


def transport_url(service_ip):
    return "rabbit://%s/" % ",".join(
        "guest:guest@%s:%d" % (service_ip, common.RABBIT_AMQP + i)
        for i in range(1, NODES + 1)
    )


def running_nodes(piece, i=1):
    out = ctl(piece, i, "cluster_status", "--formatter", "json", timeout=60)
    if out.returncode != 0:
        return []
    import json

    return json.loads(out.stdout).get("running_nodes", [])


def queues(piece, i=1):
    """[(name, type, leader)] of the cluster's queues, asked of node i."""
    out = ctl(
        piece,
        i,
        "list_queues",
        "-q",
        "--no-table-headers",
        "name",
        "type",
        "leader",
        timeout=60,
    )
    return [
        tuple(line.split("\t")) for line in out.stdout.splitlines() if line
    ]


def down(piece):
    processes.stop_all(piece)
    piece.forget()


def status(piece):
    out = {"daemons": common.piece_status(piece)}
    if piece.pids:
        out["running_nodes"] = running_nodes(piece)
        out["transport_url"] = piece.data.get("transport_url")
    return out
