"""The substrate's network: a service address and three host namespaces.

The servers (RabbitMQ, etcd, Patroni's PostgreSQL, Galera, HAProxy)
listen on the *service address*, 10.243.N.1 on a bridge of this
substrate's own (``hlha<id>``, no member ports: only an address the host
owns). The three "hosts" are network namespaces joined to the root
namespace by a veth pair each (``harness.netns``, as the chaos tests
make them), routed through the host end, so they reach the service
address and nothing but the host; cutting a host's veth partitions that
host alone. Nothing listens on 0.0.0.0 or on the machine's loopback
services' ports.
"""

import random
import subprocess
import uuid

from harness import netns

HOSTS = 3


def _ip(*args):
    return subprocess.run(
        ["ip", *args], check=True, capture_output=True, text=True, timeout=30
    )


def _used_service_nets():
    out = _ip("-4", "-o", "addr").stdout
    return {
        line.split()[3].split(".")[2]
        for line in out.splitlines()
        if " 10.243." in line
    }


def up(piece):
    if piece.data.get("bridge"):
        return piece.data
    used = _used_service_nets()
    third = random.choice([n for n in range(1, 251) if str(n) not in used])
    bridge = "hlha%s" % uuid.uuid4().hex[:6]
    piece.data = {"bridge": bridge, "service_ip": "10.243.%d.1" % third}
    piece.save()  # before anything exists: down() can always clean up
    _ip("link", "add", bridge, "type", "bridge")
    _ip("addr", "add", piece.data["service_ip"] + "/32", "dev", bridge)
    _ip("link", "set", bridge, "up")
    hosts = []
    for i in range(1, HOSTS + 1):
        ns = netns.Namespace(name="hlha%d" % i, short="hla%d" % i)
        hosts.append(ns.to_dict())
        piece.data["hosts"] = hosts
        piece.save()
        ns.create()
        ns.route_via_host()
    return piece.data


def down(piece):
    for data in piece.data.get("hosts", ()):
        netns.Namespace.from_dict(data).destroy()
    if piece.data.get("bridge"):
        subprocess.run(
            ["ip", "link", "del", piece.data["bridge"]], capture_output=True
        )
    piece.forget()


def hosts(piece):
    return [netns.Namespace.from_dict(d) for d in piece.data["hosts"]]


def status(piece):
    return {
        "service_ip": piece.data.get("service_ip"),
        "hosts": [
            {"namespace": d["name"], "ip": d["ns_ip"]}
            for d in piece.data.get("hosts", ())
        ],
    }
