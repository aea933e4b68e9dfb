"""``python -m tools.ha WHAT up|down|status --dir DIR``.

WHAT is one piece (net, rabbitmq, patroni, galera, hosts) or ``all``.
``up`` of a piece brings up the network first (the service address and
the host namespaces); ``hosts up`` needs rabbitmq and the database piece
named by ``--db``. ``down`` stops a piece's daemons by their recorded
PIDs (``<DIR>/<piece>/state.json``, written as each one starts, so a
runner killed with -9 leaves nothing that ``down`` cannot stop) and
removes its files' state; ``all down`` also removes the network.
Run as root (namespaces, bridge, the postgres user), from heat_lite's
venv at the top of the tree.
"""

import argparse
import json
import os
import resource
import sys
import time

from tools.ha import common, galera, hosts, net, patroni, rabbitmq
from tools.ha.state import Piece

PIECES = ("net", "rabbitmq", "patroni", "galera", "hosts")


def _up(root, what, db):
    network = net.up(Piece(root, "net"))
    ip = network["service_ip"]
    if what == "net":
        return network
    if what == "rabbitmq":
        return rabbitmq.up(Piece(root, "rabbitmq"), ip)
    if what == "patroni":
        return patroni.up(Piece(root, "patroni"), ip)
    if what == "galera":
        return galera.up(Piece(root, "galera"), ip)
    if what == "hosts":
        return hosts.up(Piece(root, "hosts"), root, db)
    raise ValueError(what)


_DOWN = {
    "net": net.down,
    "rabbitmq": rabbitmq.down,
    "patroni": patroni.down,
    "galera": galera.down,
    "hosts": hosts.down,
}
_STATUS = {
    "net": net.status,
    "rabbitmq": rabbitmq.status,
    "patroni": patroni.status,
    "galera": galera.status,
    "hosts": hosts.status,
}


def _measured(fn, *args):
    """(result, {"seconds", "cpu_seconds"}): wall time, and the CPU of
    this runner and of every command it waited for (rabbitmqctl, initdb,
    ...). The daemons' own CPU is in ``status`` (per piece)."""
    start = time.monotonic()
    before = _cpu()
    result = fn(*args)
    return result, {
        "seconds": round(time.monotonic() - start, 1),
        "runner_cpu_seconds": round(_cpu() - before, 1),
    }


def _cpu():
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.ha", description=__doc__.split("\n")[0]
    )
    parser.add_argument("what", choices=(*PIECES, "all"))
    parser.add_argument("action", choices=("up", "down", "status"))
    parser.add_argument("--dir", required=True, help="the substrate's dir")
    parser.add_argument(
        "--db",
        choices=("patroni", "galera"),
        default="patroni",
        help="the database heat_lite's hosts use (default %(default)s)",
    )
    args = parser.parse_args(argv)
    root = os.path.abspath(args.dir)
    os.makedirs(root, exist_ok=True)
    if args.what == "all":
        order = ("rabbitmq", "patroni", "galera", "hosts")
    else:
        order = (args.what,)
    report = {}
    if args.action == "up":
        for what in order:
            try:
                _, report[what] = _measured(_up, root, what, args.db)
            except common.StartFailed as exc:
                print("%s up failed: %s" % (what, exc), file=sys.stderr)
                return 1
            piece = Piece(root, what)
            piece.timings["up"] = report[what]
            if piece.recorded:
                piece.save()
            report[what]["status"] = _STATUS[what](piece)
    elif args.action == "down":
        if args.what == "all":
            order = ("hosts", "galera", "patroni", "rabbitmq", "net")
        for what in order:
            _, report[what] = _measured(_DOWN[what], Piece(root, what))
    else:
        if args.what == "all":
            order = PIECES
        for what in order:
            report[what] = _STATUS[what](Piece(root, what))
    json.dump(report, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
