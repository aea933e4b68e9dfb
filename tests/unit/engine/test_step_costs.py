"""What a resource costs the database: statements and commits, pinned.

The engine runs in this process (fake:// transport) on SQLite, PostgreSQL
and MariaDB. Every SQL statement and commit the engine makes for a stack
operation is counted (SQLAlchemy events; the heartbeat's and watchdog's
threads and the test's own status polls left out), for a stack of N and
one of 2N resources: the difference divided by N is the exact cost of
one more resource, free of what the operation costs per stack. The counts
are deterministic (no timing is asserted): a change that adds a statement
or a commit to a resource step fails here, and the ceilings below move
only on purpose, with the figures in ``doc/bench/``.
"""

import collections
import threading
import uuid

import pytest
import sqlalchemy as sa

from harness import endpoints, inprocess, polling
from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import session

CONF = conf.CONF
CTXT = context.RequestContext(project_id="p", user_id="u")
N = 6
# Threads whose statements are not a stack operation's.
BACKGROUND = (
    "heat-lite-heartbeat",
    "heat-lite-watchdog",
    "heat-lite-counters",
    "heat-lite-rollouts",
    "heat-lite-promotions",
    "heat-lite-builds",
)
GRAPH_READ = "SELECT traversal.id,"
NONE, TEST = "OS::Heat::None", "OS::Heat::TestResource"
OVERRIDES = {
    "heartbeat_interval": 0.2,
    # No re-drive of a stack that seems stalled on a loaded machine: a
    # re-driven node reads its record again (one statement more).
    "stall_timeout": 600,
}

# Per resource (statements, commits) with a finish of three statements
# (SQLite), by type, operation and shape (flat, chain), before what each
# dialect saves (``_dialect`` below). doc/bench/round2.md says where each
# goes.
#
# OS::Heat::None (side-effect free: no lock, one commit per step): the
# read of the node (chain: + the record it depends on), the finish
# (record, events, sync point); delete: the first cleanup nodes read in
# one SELECT for the batch, a chain's next one in the finish of the node
# it waited for.
#
# OS::Heat::TestResource (something real behind it): create and replace
# take the lock before the plugin creates (replace: the new version
# inserted locked, the stack's traversal guard part of its INSERT ...
# SELECT, in the transaction whose UPDATE makes the old one
# ``replaced``); the physical ID is written by the finish (the plugin
# finds what an interrupted create made); the cleanup of a replaced (or
# deleted) version is its finish, its read and lock taken ahead -- flat:
# one SELECT and one UPDATE for the batch of first cleanup nodes; chain:
# a SELECT and an UPDATE in the finish of the cleanup node it waited for.
_COSTS = {
    NONE: {
        "create": {"flat": (4, 1), "chain": (5, 1)},
        "update": {"flat": (4, 1), "chain": (5, 1)},
        "delete": {"flat": (4, 1), "chain": (5, 1)},
    },
    TEST: {
        "create": {"flat": (5, 2), "chain": (6, 2)},
        "replace": {"flat": (9, 3), "chain": (12, 3)},
        "delete": {"flat": (4, 1), "chain": (6, 1)},
    },
}

# Finishes per resource, by operation (a replacement: the new version's
# and the old one's cleanup).
FINISHES = {"create": 1, "update": 1, "delete": 1, "replace": 2}
# Chain update nodes per resource that read the record they depend on
# along with their own (``worker.handon``: its finish handed it on).
HANDED = {"create": 1, "update": 1, "delete": 0, "replace": 1}
# Chain cleanup nodes per resource that something real is behind, whose
# lock the finish of the cleanup node they waited for takes.
CLEANUP_LOCKS = {"create": 0, "update": 0, "delete": 1, "replace": 1}


def _sqlite(rtype, op, shape):
    """SQLite numbers a new record with a statement of its own."""
    return op == "create"


def _mariadb(rtype, op, shape):
    """A finish's record and sync point are one multiple-table UPDATE
    (``dialects.mysql.finish_with_sync_mysql``): one fewer a finish. In a
    chain of real resources a cleanup's finish reads its successor first
    and locks it in that same UPDATE
    (``dialects.mysql.finish_and_lock_mysql``): one fewer a cleanup lock."""
    chain_locks = shape == "chain" and rtype == TEST
    return -FINISHES[op] - chain_locks * CLEANUP_LOCKS[op]


def _postgresql(rtype, op, shape):
    """A finish (record, events, sync point) is one statement
    (``dialects.postgresql.finish_in_one``): two fewer per finish."""
    return -2 * FINISHES[op]


def _dialect(saves):
    """``_COSTS``, less what every dialect saves (a chain's handed
    dependency read along with the node's record), plus ``saves``."""
    return {
        t: {
            op: {
                shape: (
                    n - (shape == "chain") * HANDED[op] + saves(t, op, shape),
                    c,
                )
                for shape, (n, c) in shapes.items()
            }
            for op, shapes in ops.items()
        }
        for t, ops in _COSTS.items()
    }


EXPECTED = {
    "postgresql": _dialect(_postgresql),
    "mysql": _dialect(_mariadb),
    "sqlite": _dialect(_sqlite),
}


class Counter:
    """Counts statements and commits of the engine's threads, and of the
    test's thread only inside ``calling()``."""

    def __init__(self, engine):
        self.engine = engine
        self.statements = 0
        self.commits = 0
        # {first words of a statement: times}: what a failure shows.
        self.kinds = collections.Counter()
        self._test_thread = threading.get_ident()
        self._calling = False
        self._lock = threading.Lock()

    def _counted(self):
        if threading.get_ident() == self._test_thread:
            return self._calling
        return not threading.current_thread().name.startswith(BACKGROUND)

    def _statement(self, conn, cursor, statement, *args):
        # A traversal's graph is read once per process, or once per
        # thread that misses the cache at the same moment (a race that
        # depends on timing): a cost per traversal, not per resource.
        if statement.startswith(GRAPH_READ):
            return
        # PostgreSQL prepares each per-node statement once per pooled
        # connection (``db.direct``): how many connections a run happens
        # to use is timing, not a cost per resource.
        if statement.startswith("PREPARE "):
            return
        if statement != "BEGIN" and self._counted():
            with self._lock:
                self.statements += 1
                self.kinds[" ".join(statement.split()[:8])] += 1

    def _commit(self, conn):
        if self._counted():
            with self._lock:
                self.commits += 1

    def __enter__(self):
        sa.event.listen(self.engine, "before_cursor_execute", self._statement)
        sa.event.listen(self.engine, "commit", self._commit)
        return self

    def __exit__(self, *exc):
        sa.event.remove(self.engine, "before_cursor_execute", self._statement)
        sa.event.remove(self.engine, "commit", self._commit)

    def settle(self, quiet=0.5):
        """Wait until no statement was counted for ``quiet`` seconds."""
        seen = [None]

        def moved():
            now = (self.statements, self.commits)
            changed, seen[0] = now != seen[0], now
            return changed

        polling.until(lambda: not moved(), 30, "the engine idle", quiet)

    def call(self, fn, *args):
        self._calling = True
        try:
            return fn(*args)
        finally:
            self._calling = False


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def engine(request, tmp_path_factory):
    with inprocess.engine_process(
        request.param, tmp_path_factory.mktemp("costs"), OVERRIDES
    ) as proc:
        inprocess.first_watchdog_pass(proc)
        svc = endpoints.Engine(proc.ops, proc.services)
        # The first operation of a process reads what later ones find
        # cached.
        _costs(svc, 1, False, TEST)
        yield request.param, svc


def _template(n, rtype, value, chain=False):
    """N resources of ``rtype``; a new ``value`` updates each in place
    (OS::Heat::None) or replaces it (OS::Heat::TestResource)."""
    props = (
        {"v": value}
        if rtype == NONE
        else {"value": "x", "update_replace_value": value}
    )
    resources = {}
    for i in range(n):
        res = {"type": rtype, "properties": props}
        if chain and i:
            res["depends_on"] = "r%d" % (i - 1)
        resources["r%d" % i] = res
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _counted(call, stack_id, reaches):
    """The Counter of ``call()`` until the stack ``reaches`` a state."""
    with Counter(session.get_engine()) as counter:
        result = counter.call(call)
        stack_id = stack_id or result["stack_id"]
        polling.stack_reaches(stack_id, reaches, timeout=60)
        # What follows the stack's completion in the engine's threads.
        counter.settle()
    return counter, stack_id


def _costs(svc, n, chain, rtype):
    """{operation: Counter} of the life of a stack of n ``rtype``:
    create, update (in place, or replace), delete."""
    name = "cost-" + uuid.uuid4().hex[:8]
    first, second = (_template(n, rtype, v, chain) for v in "ab")
    create, stack_id = _counted(
        lambda: svc.create_stack(CTXT, name, first, {}, {}, None, None, {}),
        None,
        "CREATE_COMPLETE",
    )
    ident = {"stack_id": stack_id}
    update, _ = _counted(
        lambda: svc.update_stack(CTXT, ident, second, {}, {}, None, None, {}),
        stack_id,
        "UPDATE_COMPLETE",
    )
    delete, _ = _counted(
        lambda: svc.delete_stack(CTXT, ident), stack_id, "DELETE_COMPLETE"
    )
    kind = "update" if rtype == NONE else "replace"
    return {"create": create, kind: update, "delete": delete}


@pytest.mark.parametrize("rtype", [NONE, TEST], ids=["none", "test"])
@pytest.mark.parametrize("chain", [False, True], ids=["flat", "chain"])
def test_costs_per_resource(engine, chain, rtype):
    kind, svc = engine
    small = _costs(svc, N, chain, rtype)
    large = _costs(svc, 2 * N, chain, rtype)
    shape = "chain" if chain else "flat"
    failures = []
    for op, big in large.items():
        few = small[op]
        per_resource = (
            (big.statements - few.statements) / N,
            (big.commits - few.commits) / N,
        )
        expected = EXPECTED[kind][rtype][op][shape]
        if per_resource != expected:
            by_kind = {
                k: (big.kinds[k] - few.kinds[k]) / N
                for k in set(big.kinds) | set(few.kinds)
            }
            failures.append(
                "%s %s: %s, expected %s\n%s"
                % (
                    op,
                    shape,
                    per_resource,
                    expected,
                    "\n".join(
                        "%5.2f %s" % (n, k)
                        for k, n in sorted(by_kind.items())
                        if n
                    ),
                )
            )
    assert not failures, "\n".join(failures)
