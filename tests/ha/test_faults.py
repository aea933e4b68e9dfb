"""Faults of the highly available substrate under load.

Stacks are created and updated through the load balancer the whole time
(``load.Load``); then one piece of the substrate fails: the RabbitMQ node
that leads the work queues is killed, the Patroni primary is stopped, a
Galera node (the one HAProxy sends writes to) is killed, a whole host is
killed, or cut off for 30 s and healed. Each scenario
asserts that every stack converges (no operation fails), that no API
answer is worse than 503, and that the TestResource ledger shows nothing
leaked, created twice or deleted twice; it reports the seconds from the
fault until the operations in flight and a new one completed. The failed
piece is brought back afterwards, for the next scenario.
"""

import collections
import signal
import time

import pytest

from harness import polling
from tests.ha import load as load_mod
from tests.ha.conftest import report
from tests.resources_ledger import assert_no_leaks, ledger_counts
from tools.ha import common, galera, hosts, net, patroni, rabbitmq
from tools.ha.state import Piece
from tools.minicloud import processes

WARM_OPS = 3  # operations completed before the fault
RECOVERY_TIMEOUT = 300


def _scenario(deployment, name, fault, restore):
    work = load_mod.Load(deployment.url, "%s-%s" % (name, deployment.db))
    work.start()
    undo = fault_at = None
    try:
        polling.until(
            lambda: sum(1 for op in work.ops if op[3]) >= WARM_OPS,
            180,
            "the load running",
            interval=0.5,
        )
        fault_at = time.time()
        undo = fault()
        polling.until(
            lambda: work.recovery_seconds(fault_at) is not None,
            RECOVERY_TIMEOUT,
            "an operation begun after the fault completing",
            interval=0.5,
        )
    finally:
        work.stop()
        if fault_at is not None:
            report(
                name,
                deployment.db,
                work.recovery_seconds(fault_at) or -1,
                ops=len(work.ops),
                failed=len(work.failed_ops()),
                answers_503=work.answers_503,
                worse=len(work.bad_answers),
            )
        if undo is not None:
            restore(undo)
    assert not work.bad_answers, (
        "answers worse than 503: %s" % (work.bad_answers[:5])
    )
    assert not work.failed_ops(), work.failed_ops()[:3]
    _check_ledger(deployment, work)


def _check_ledger(deployment, work):
    """Each resource created once; after deleting the stacks nothing is
    left and nothing was deleted twice."""
    creates, _ = ledger_counts(deployment)
    for stack_name in work.stacks:
        mine = [p for p in creates if p.startswith(stack_name + "-r")]
        counts = collections.Counter(p.split("-")[-3] for p in mine)
        assert len(mine) == work.resources and set(counts.values()) == {1}, (
            "%s: created %s" % (stack_name, sorted(mine))
        )
    heat = load_mod.client(deployment.url)
    for stack_id in work.stacks.values():
        polling.retrying(
            lambda s=stack_id: heat.stacks.delete(s),
            load_mod.heat_exc.HTTPServiceUnavailable,
            60,
        )
    for stack_id in work.stacks.values():
        load_mod.helpers.wait_for_status(
            heat, stack_id, "DELETE_COMPLETE", 120
        )
    assert_no_leaks(deployment, timeout=30)
    _, deletes = ledger_counts(deployment)
    twice = sorted(p for p, n in deletes.items() if n > 1)
    assert not twice, "deleted twice: %s" % twice


# RabbitMQ --------------------------------------------------------------------
def test_rabbitmq_queue_leader_killed(deployment, substrate):
    piece = Piece(substrate, "rabbitmq")

    def fault():
        leaders = {q[0]: q[2] for q in rabbitmq.queues(piece) if len(q) > 2}
        node = leaders["heat_lite-worker"]
        i = piece.data["nodes"].index(node) + 1
        processes.signal_group(piece.pids["rabbit%d" % i], signal.SIGKILL)
        return i

    def restore(i):
        _gone(piece, "rabbit%d" % i)
        rabbitmq.start_node(piece, i)
        polling.until(
            lambda: len(rabbitmq.running_nodes(piece, i)) == rabbitmq.NODES,
            120,
            "the node rejoined",
            interval=1,
        )

    _scenario(deployment, "rabbitmq_leader_killed", fault, restore)


# PostgreSQL / Patroni --------------------------------------------------------
@pytest.mark.parametrize("deployment", ["patroni"], indirect=True)
def test_patroni_primary_stopped(deployment, substrate):
    piece = Piece(substrate, "patroni")

    def fault():
        i = patroni.leader(piece)
        processes.signal_group(piece.pids["patroni%d" % i], signal.SIGTERM)
        return i

    def restore(i):
        _gone(piece, "patroni%d" % i)
        patroni.start_node(piece, i)
        polling.until(
            lambda: patroni.rest(piece, i, "replica") == 200,
            180,
            "the old primary streaming as a replica",
            interval=1,
        )

    _scenario(deployment, "patroni_primary_stopped", fault, restore)


# Galera ----------------------------------------------------------------------
@pytest.mark.parametrize("deployment", ["galera"], indirect=True)
def test_galera_writer_lost(deployment, substrate):
    piece = Piece(substrate, "galera")

    def fault():
        processes.signal_group(piece.pids["galera1"], signal.SIGKILL)
        return 1

    def restore(i):
        _gone(piece, "galera%d" % i)
        galera.start_node(piece, i, size=galera.NODES)

    _scenario(deployment, "galera_writer_lost", fault, restore)


# Hosts -----------------------------------------------------------------------
HOST = 2  # the one that fails (any of the three)
PARTITION_SECONDS = 30


# Known to fail now (kept to show the seconds and what goes wrong): a
# request in flight to the killed host's API ends with the connection
# closed (HAProxy does not retry a PUT/POST it sent), worse than a 503.
@pytest.mark.xfail(
    reason="in-flight request to the killed API: connection closed",
    strict=False,
)
def test_host_killed(deployment, substrate):
    """Every process of a host killed (API, engine and its workers)."""
    piece = Piece(substrate, "hosts")

    def fault():
        for key in ("api%d" % HOST, "engine%d" % HOST):
            processes.signal_group(piece.pids[key], signal.SIGKILL)
        return HOST

    def restore(i):
        for key in ("api%d" % i, "engine%d" % i):
            _gone(piece, key)
        hosts.start_host(piece, i)
        hosts.wait_host(piece, i)

    _scenario(deployment, "host_killed", fault, restore)


# Known to fail now: a request in flight to the cut-off API is not
# answered within HAProxy's 120 s after the host is back (its database
# connections, without TCP keepalives, wait out the retransmission
# backoff), so the client gets a 504.
@pytest.mark.xfail(
    reason="in-flight request to the partitioned API: 504 after 120 s",
    strict=False,
)
def test_host_partitioned(deployment, substrate):
    """A host cut off for 30 s (every packet to and from it dropped), then
    healed: its engine comes back to find its work taken over, and must
    not act twice."""
    ns = net.hosts(Piece(substrate, "net"))[HOST - 1]

    def fault():
        ns.isolate()
        try:
            time.sleep(PARTITION_SECONDS)
        finally:
            ns.rejoin()
        return None

    _scenario(deployment, "host_partitioned_30s", fault, lambda _: None)


def _gone(piece, name):
    pid = piece.pids[name]
    polling.until(
        lambda: not common.group_members(pid), 60, "%s exited" % name
    )
