"""Three heat_lite "hosts" behind HAProxy.

Each host is one of the network namespaces ``net`` made, running a
``heat-lite-api`` and a ``heat-lite-engine --workers 2`` with the same
configuration file: the RabbitMQ cluster's transport URL (all three
nodes, quorum queues) and the chosen database (Patroni's multi-host URL
with ``target_session_attrs=read-write``, or Galera through its
single-writer HAProxy). Processes are started with ``ip netns exec``,
which execs, so the recorded PID is the heat_lite process itself; an
engine's worker processes share its process group.

A second HAProxy (``haproxy-api``) on the service address balances the
three APIs (round robin, checked with ``GET /``, a failed request
retried on another host).
"""

import os
import sys

import requests

from tools.ha import common, galera, net, patroni, rabbitmq
from tools.ha.state import Piece
from tools.minicloud import processes

ENGINE_WORKERS = 2

_CONFIG = """\
[DEFAULT]
transport_url = {transport}
control_exchange = heat_lite

[oslo_messaging_rabbit]
# Queues replicated by Raft over the three nodes: a node's death moves
# their leader instead of losing them.
rabbit_quorum_queue = true

[database]
connection = {db}
max_pool_size = 10
max_overflow = 20

[api]
# Inside each host's namespace: its own address only.
bind_host = 0.0.0.0
bind_port = {api_port}
allow_insecure_noauth = true
# The load balancer's address: the Host header clients send.
allowed_hosts = {lb}

[engine]
test_resource_ledger = {ledger}
"""


def _bin(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else name


def config(piece, root, db):
    """Write the hosts' configuration; its path."""
    broker = Piece(root, "rabbitmq")
    if not broker.pids:
        raise common.StartFailed("rabbitmq is not up (tools.ha rabbitmq up)")
    database = Piece(root, db)
    if not database.pids:
        raise common.StartFailed("%s is not up (tools.ha %s up)" % (db, db))
    module = patroni if db == "patroni" else galera
    url = module.create_database(database, "heat_lite")
    path = piece.path("heat_lite.conf")
    with open(path, "w") as f:
        f.write(
            _CONFIG.format(
                transport=broker.data["transport_url"],
                db=url,
                api_port=common.HOST_API,
                lb="%s:%d"
                % (
                    Piece(root, "net").data["service_ip"],
                    common.LB_API,
                ),
                ledger=piece.path("ledger"),
            )
        )
    return path


def start_host(piece, i):
    """Start host i's API and engine (again, after a kill)."""
    ns = net.hosts(Piece(piece.root, "net"))[i - 1]
    cfg = piece.data["config"]
    # A data directory per host, as on separate machines (an engine's
    # identity file lives there).
    data = piece.path("host%d" % i)
    os.makedirs(data, exist_ok=True)
    env = {"XDG_DATA_HOME": data}
    processes.spawn(
        piece,
        "api%d" % i,
        [*ns.prefix(), _bin("heat-lite-api"), "--config-file", cfg],
        env,
    )
    processes.spawn(
        piece,
        "engine%d" % i,
        [
            *ns.prefix(),
            _bin("heat-lite-engine"),
            "--config-file",
            cfg,
            "--workers",
            str(ENGINE_WORKERS),
        ],
        env,
    )


def wait_host(piece, i, timeout=180):
    """Until host i's API answers (its engine still running)."""
    ns = net.hosts(Piece(piece.root, "net"))[i - 1]
    common.wait(
        lambda: _answers("http://%s:%d/" % (ns.ns_ip, common.HOST_API)),
        timeout,
        "api%d" % i,
        piece,
        ["api%d" % i, "engine%d" % i],
    )


def _answers(url):
    requests.get(url, timeout=2)
    return True


def up(piece, root, db):
    if piece.pids:
        return piece.data
    network = Piece(root, "net")
    ip = network.data["service_ip"]
    piece.data = {"db": db}
    piece.save()
    # The TestResource ledger of this run of the hosts only.
    if os.path.exists(piece.path("ledger")):
        os.unlink(piece.path("ledger"))
    cfg = config(piece, root, db)
    piece.data["config"] = cfg
    piece.save()
    processes.run(
        piece,
        "db-sync",
        [_bin("heat-lite-manage"), "--config-file", cfg, "db", "sync"],
    )
    hosts = net.hosts(network)
    for i in range(1, len(hosts) + 1):
        start_host(piece, i)
    for i in range(1, len(hosts) + 1):
        wait_host(piece, i)
    servers = "".join(
        "    server host%d %s:%d check\n" % (i, ns.ns_ip, common.HOST_API)
        for i, ns in enumerate(hosts, 1)
    )
    common.haproxy(
        piece,
        "haproxy-api",
        "listen api\n"
        "    mode http\n"
        "    bind %s:%d\n"
        "    balance roundrobin\n"
        "    option httpchk GET /\n"
        "    http-check expect status 200-399\n"
        "    retries 2\n"
        "    option redispatch\n"
        "    retry-on conn-failure empty-response\n"
        # A request in flight to a host that is cut off waits for it (up
        # to the API's own longest answer), it is not cut: a closed
        # connection would be worse than the API's 503.
        "    timeout server 120s\n" % (ip, common.LB_API) + servers,
    )
    piece.data["url"] = "http://%s:%d" % (ip, common.LB_API)
    piece.save()
    common.wait(
        lambda: _answers(piece.data["url"] + "/"),
        30,
        "api through haproxy",
        piece,
        ["haproxy-api"],
    )
    return piece.data


def down(piece):
    processes.stop_all(piece, timeout=60)
    piece.forget()


def status(piece):
    out = {"daemons": common.piece_status(piece)}
    if piece.pids:
        out["url"] = piece.data.get("url")
        out["db"] = piece.data.get("db")
        out["config"] = piece.data.get("config")
    return out


def quorum_queues(root):
    """[(name, type, leader)] of the broker's queues (quorum expected)."""
    return rabbitmq.queues(Piece(root, "rabbitmq"))
