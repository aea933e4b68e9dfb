"""The worker's concurrency guards, with two workers really racing.

Each test starts two threads that act as two engines (each its own
``LockTable`` and registered ``Fence``) at the same instant, on one
record or one sync point, and checks that exactly one of them wins:

- two workers take the lock of one record (``LockTable.take``);
- two workers finish the two predecessors of one node, each under its
  lease, in the transaction that decrements the node's sync point: the
  node fires exactly once, for exactly one of them;
- an update and a delete race on one record's ``atomic_key``: the
  update's lock and the delete's unlocked finish cannot both succeed.

On a SQLite file, PostgreSQL and MariaDB (``harness/backends.py``).
"""

import functools
import threading
import time
import uuid

import pytest

from harness import databases
from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.common.states import Action, Status
from heat_lite.db import finish as db_finish
from heat_lite.db import records as db_records
from heat_lite.db import sync_points as db_sync_points
from heat_lite.engine import plugin_services
from heat_lite.engine.endpoint import service
from heat_lite.engine.recovery import fencing
from heat_lite.engine.traversal import graph_cache, ops
from heat_lite.engine.traversal.planner import CLEANUP, UPDATE
from heat_lite.engine.worker import lease, prelock, successors
from heat_lite.engine.worker.node import Node
from heat_lite.resources import registry

CONF = conf.CONF
ROUNDS = 5
# c waits for both a and b: two workers finishing a and b race on c's
# sync point.
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "a": {"type": "OS::Heat::None"},
        "b": {"type": "OS::Heat::None"},
        "c": {"type": "OS::Heat::None", "depends_on": ["a", "b"]},
    },
}


class Dispatcher:
    """Keeps the first nodes of a traversal instead of running them: the
    test's two workers run them."""

    draining = False

    def __init__(self):
        self.casts = []

    def cast(self, nodes):
        self.casts.extend(nodes)


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def database(request, tmp_path_factory):
    CONF([], project="heat_lite")
    registry.load()
    with databases.private_database(
        request.param, tmp_path_factory.mktemp("lease")
    ):
        yield request.param


def _worker(name):
    """One engine's lock table, under a registered engine life."""
    fence = fencing.Fence(
        str(uuid.uuid4()),
        {
            "host": name,
            "hostname": name,
            "binary": "test-lease",
            "topic": "t",
            "report_interval": 1,
            "pid": 1,
        },
    )
    fence.register()
    return lease.LockTable(fence, Dispatcher())


def _stack(template=TEMPLATE):
    """A new stack whose traversal is started and whose nodes wait:
    {name: record} and the traversal."""
    ctxt = context.RequestContext(project_id="p", user_id="u")
    stack_ops = ops.StackOps(Dispatcher())
    ident = service.EngineService(
        stack_ops, plugin_services.EngineServices(stack_ops)
    ).create_stack(
        ctxt, "lease-" + uuid.uuid4().hex[:8], template, {}, {}, {}, [], {}
    )
    records = {
        r["name"]: db_records.resource_load(r["id"])
        for r in db_records.resource_get_all(ident["stack_id"])
    }
    return records, next(iter(records.values()))["stack_traversal"]


def _renew(*tables):
    """What each engine's heartbeat does: its lease is fresh (another
    test may have shortened ``engine_life_check_timeout``)."""
    for table in tables:
        table.fence.renewed(time.monotonic())
        assert table.may_act()


def _race(*fns):
    """Run ``fns`` in threads that start together; their outcomes
    (a result, or the exception raised), in order."""
    start = threading.Barrier(len(fns))
    outcomes = [None] * len(fns)

    def run(i, fn):
        start.wait(10)
        try:
            outcomes[i] = fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcomes[i] = exc

    threads = [
        threading.Thread(target=run, args=(i, fn), daemon=True)
        for i, fn in enumerate(fns)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a racer did not finish"
    return outcomes


def test_two_workers_never_both_lock_a_record(database):
    first, second = _worker("one"), _worker("two")
    for _ in range(ROUNDS):
        records, traversal = _stack()
        record = records["a"]
        _renew(first, second)
        got = _race(
            functools.partial(first.take, record, traversal, Action.CREATE),
            functools.partial(second.take, record, traversal, Action.CREATE),
        )
        won = [
            (t, g)
            for t, g in zip((first, second), got, strict=True)
            if g is not None
        ]
        assert len(won) == 1, got
        table, held = won[0]
        row = db_records.resource_load(record["id"])
        assert (row["engine_id"], row["lock_epoch"]) == held.owner
        assert row["atomic_key"] == record["atomic_key"] + 1
        assert table.active_records() == {record["id"]}
        loser = second if table is first else first
        assert loser.active_records() == set()
        # The loser's read is stale now: it cannot lock it afterwards
        # either, and neither can the winner a second time.
        assert loser.take(record, traversal, Action.CREATE) is None
        assert table.take(row, traversal, Action.CREATE) is None
        held.forget()


def test_one_worker_refuses_a_record_it_is_locking(database):
    """Two threads of one engine (a re-drive crossing a cast): one lock,
    and the loser leaves the winner's lease alone."""
    table = _worker("same")
    for _ in range(ROUNDS):
        records, traversal = _stack()
        record = records["b"]
        _renew(table)
        got = _race(
            functools.partial(table.take, record, traversal, Action.CREATE),
            functools.partial(table.take, record, traversal, Action.CREATE),
        )
        leases = [g for g in got if g is not None]
        assert len(leases) == 1, got
        assert leases[0].held()
        assert table.active_records() == {record["id"]}
        leases[0].forget()


def _finish(table, record, traversal, graphs):
    """What a worker's last write of a node is: the record released by
    its lease's owner, the successors' sync points decremented."""
    held = table.take(record, traversal, Action.CREATE)
    assert held is not None
    node = Node(record["stack_id"], traversal, record["id"], UPDATE)
    fired, superseded = db_finish.resource_finish(
        record["id"],
        None,
        held.owner,
        {
            "action": Action.CREATE,
            "status": Status.COMPLETE,
            "converged_traversal": traversal,
        },
        [],
        traversal,
        UPDATE,
        successors.Successors(graphs).of(node),
    )
    held.forget()
    return fired, superseded


def test_a_node_fires_once_when_its_inputs_finish_together(database):
    first, second = _worker("one"), _worker("two")
    graphs = graph_cache.GraphCache()
    finish = _finish
    for _ in range(ROUNDS):
        records, traversal = _stack()
        c = records["c"]["id"]
        assert db_sync_points.sync_point_remaining(traversal, c, UPDATE) == 2
        _renew(first, second)
        got = _race(
            functools.partial(finish, first, records["a"], traversal, graphs),
            functools.partial(finish, second, records["b"], traversal, graphs),
        )
        for outcome in got:
            assert not isinstance(outcome, Exception), outcome
        fired = [f for f, _superseded in got]
        assert sorted(len(f) for f in fired) == [0, 1], fired
        assert [(c, UPDATE)] in fired
        assert not any(s for _f, s in got)
        assert db_sync_points.sync_point_remaining(traversal, c, UPDATE) == 0
        for name in "ab":
            row = db_records.resource_load(records[name]["id"])
            assert row["engine_id"] is None
            assert row["converged_traversal"] == traversal


def _delete_unlocked(record, traversal):
    """A delete that finishes the record without a lock, as a
    side-effect-free plugin's instant path does: guarded by the
    ``atomic_key`` it read."""
    return db_finish.resource_finish(
        record["id"],
        record["atomic_key"],
        None,
        {
            "action": Action.DELETE,
            "status": Status.COMPLETE,
            "converged_traversal": traversal,
        },
        [],
        traversal,
        CLEANUP,
        [],
    )


def test_an_update_and_a_delete_never_both_act_on_a_record(database):
    """The update takes the lock with a CAS on ``atomic_key``; the delete
    finishes the record without a lock (a side-effect-free plugin's
    instant path), guarded by the same ``atomic_key``: one of them."""
    updater, deleter = _worker("update"), _worker("delete")
    for _ in range(ROUNDS):
        records, traversal = _stack()
        record = records["a"]
        _renew(updater, deleter)
        got = _race(
            functools.partial(updater.take, record, traversal, Action.UPDATE),
            functools.partial(_delete_unlocked, record, traversal),
        )
        locked = got[0] is not None
        deleted = not isinstance(got[1], exception.ConcurrentTransaction)
        if deleted:
            assert not isinstance(got[1], Exception), got[1]
        assert locked != deleted, got
        row = db_records.resource_load(record["id"])
        assert row["atomic_key"] == record["atomic_key"] + 1
        if locked:
            assert row["engine_id"] == updater.fence.engine_id
            assert row["action"] == Action.UPDATE
        else:
            assert row["engine_id"] is None
            assert (row["action"], row["status"]) == ("DELETE", "COMPLETE")
        assert deleter.active_records() == set()


def _made(table):
    """A record with a physical resource behind it (a TestResource whose
    create finished), and its stack's traversal: its cleanup node
    deletes it under a lock."""
    records, traversal = _stack(
        {
            "heat_template_version": "2018-08-31",
            "resources": {"t": {"type": "OS::Heat::TestResource"}},
        }
    )
    _renew(table)
    held = table.take(records["t"], traversal, Action.CREATE)
    assert held.release(
        {
            "action": Action.CREATE,
            "status": Status.COMPLETE,
            "physical_resource_id": "phys-" + uuid.uuid4().hex[:6],
        }
    )
    record = db_records.resource_load(records["t"]["id"])
    return record, Node(record["stack_id"], traversal, record["id"], CLEANUP)


def test_two_workers_never_both_take_a_cleanup_node_ahead(database):
    """Two workers read and lock the same cleanup node ahead (a duplicate
    message): one lease; the other runs the node with the record it read,
    which is locked."""
    first, second = _worker("one"), _worker("two")
    for _ in range(ROUNDS):
        record, node = _made(first)
        _renew(first, second)
        ahead = [prelock.Prelocks(first), prelock.Prelocks(second)]
        got = _race(*(functools.partial(p.take, [node]) for p in ahead))
        assert got == [None, None], got
        claimed = [p.claim(node) for p in ahead]
        leases = [c[1] for c in claimed if c[1] is not None]
        assert len(leases) == 1, claimed
        row = db_records.resource_load(record["id"])
        assert (row["engine_id"], row["lock_epoch"]) == leases[0].owner
        assert (row["action"], row["status"]) == (
            Action.DELETE,
            Status.IN_PROGRESS,
        )
        assert row["atomic_key"] == record["atomic_key"] + 1
        assert (first.active_records() | second.active_records()) == {
            record["id"]
        }
        leases[0].forget()


def test_a_node_taken_ahead_and_a_lock_of_one_worker_never_mix(database):
    """One engine takes a record's lock for an action while another of its
    threads reads the record's cleanup node ahead: one lock, and neither
    forgets the other's (the watchdog would take it for an orphan)."""
    table = _worker("same")
    for _ in range(ROUNDS):
        record, node = _made(table)
        _renew(table)
        ahead = prelock.Prelocks(table)
        got = _race(
            functools.partial(table.take, record, node.traversal, "DELETE"),
            functools.partial(ahead.take, [node]),
        )
        claimed = ahead.claim(node)
        leases = [g for g in got[:1] if g is not None] + [
            c for c in (claimed or (None, None))[1:] if c is not None
        ]
        assert len(leases) == 1, (got, claimed)
        assert leases[0].held()
        assert table.active_records() == {record["id"]}
        leases[0].forget()
        assert table.active_records() == set()
