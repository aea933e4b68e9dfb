"""The highly available substrate (tools/ha) for the fault scenarios.

``tox -e ha`` (``pytest tests/ha``) only: the default run does not
collect this directory (tests/conftest.py, ``pytest_ignore_collect``).
Needs root (namespaces, a bridge, the postgres and mysql users) and
Debian's rabbitmq-server, patroni, etcd-server, haproxy, galera-4 and
mariadb-server; without them the tests skip (fail under CI).

The substrate (RabbitMQ cluster, Patroni, Galera) starts once for the
session; the three heat_lite hosts start once per database
(``hosts`` is parametrised: patroni, galera). Each scenario's seconds to
recover are printed at the end of the run and appended as JSON lines to
``$HEAT_LITE_HA_TIMINGS`` (default ``<tmp>/heat_lite_ha_timings.jsonl``).
"""

import json
import os
import shutil
import tempfile

import pytest

from harness import backends, netns
from tools.ha import common, galera, hosts, net, patroni, rabbitmq
from tools.ha.state import Piece

TIMINGS = os.environ.get(
    "HEAT_LITE_HA_TIMINGS",
    os.path.join(tempfile.gettempdir(), "heat_lite_ha_timings.jsonl"),
)
_RESULTS = []


def report(scenario, db, seconds, **extra):
    """Record one scenario's seconds to recover (printed at the end)."""
    row = dict(scenario=scenario, db=db, seconds=round(seconds, 1), **extra)
    _RESULTS.append(row)
    with open(TIMINGS, "a") as f:
        f.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter):
    if not _RESULTS:
        return
    terminalreporter.section("seconds to recover, per scenario")
    for row in _RESULTS:
        terminalreporter.write_line(
            "%-28s %-8s %6.1f s  %s"
            % (
                row["scenario"],
                row["db"],
                row["seconds"],
                {
                    k: v
                    for k, v in row.items()
                    if k not in ("scenario", "db", "seconds")
                },
            )
        )


def _needs():
    if os.geteuid() != 0:
        backends.unavailable("the HA substrate", "needs root")
    for name in ("patroni", "etcd", "haproxy", "mariadbd", "epmd"):
        if not shutil.which(name) and not os.path.exists("/usr/sbin/" + name):
            backends.unavailable("the HA substrate", "%s not installed" % name)


@pytest.fixture(scope="session")
def substrate(request):
    """The root directory of a running net + rabbitmq + patroni + galera."""
    _needs()
    # Not pytest's tmp_path: its directories are 0700, and Patroni runs
    # as postgres (the servers' logs stay there after a failed run).
    root = tempfile.mkdtemp(prefix="heat_lite-ha-")
    os.chmod(root, 0o755)
    try:
        ip = net.up(Piece(root, "net"))["service_ip"]
        rabbitmq.up(Piece(root, "rabbitmq"), ip)
        patroni.up(Piece(root, "patroni"), ip)
        galera.up(Piece(root, "galera"), ip)
    except netns.Unavailable as exc:
        _down(root)
        backends.unavailable("ip netns", exc)
    except common.StartFailed:
        _down(root)
        raise
    yield root
    _down(root)
    if not request.session.testsfailed:
        shutil.rmtree(root, ignore_errors=True)


def _down(root):
    hosts.down(Piece(root, "hosts"))
    galera.down(Piece(root, "galera"))
    patroni.down(Piece(root, "patroni"))
    rabbitmq.down(Piece(root, "rabbitmq"))
    net.down(Piece(root, "net"))


@pytest.fixture(scope="module", params=["patroni", "galera"])
def deployment(request, substrate):
    """Three hosts (API + 2 engine workers each) on the ``db`` database,
    behind HAProxy: a Piece with ``url`` (the balancer) and ``ledger``."""
    piece = Piece(substrate, "hosts")
    try:
        hosts.up(piece, substrate, request.param)
        piece.url = piece.data["url"]
        piece.ledger = piece.path("ledger")
        piece.db = request.param
        yield piece
    finally:
        hosts.down(Piece(substrate, "hosts"))
