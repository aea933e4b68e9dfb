"""Never strand, never act twice: engines stopped, killed and paused.

Each test runs its own deployment (heat-lite-api + ``heat-lite-engine
--workers 2`` over a private RabbitMQ vhost and a private PostgreSQL or
MariaDB database; heat-lite-all on SQLite where a single process is
enough) because it stops, kills or pauses engines. OS::Heat::TestResource
keeps a ledger of every physical ID created and deleted: it proves that
nothing leaks and that no resource is created (or deleted) twice.

Every test reports the seconds from the fault to COMPLETE: printed, and
appended as JSON lines to ``$HEAT_LITE_CHAOS_TIMINGS`` (default
``<tmp>/heat_lite_chaos_timings.jsonl``).
"""

import collections
import json
import os
import signal
import tempfile
import threading
import time

import pytest
import sqlalchemy as sa
from heatclient import exc as heat_exc

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.resources_ledger import assert_no_leaks

# One scenario at a time (on one xdist worker): each runs three processes
# of its own and waits out liveness timeouts; those that bound seconds
# tightly are marked ``alone`` (no other test runs meanwhile).
pytestmark = pytest.mark.xdist_group("chaos-engines")

TR = "OS::Heat::TestResource"
MULTI = ["postgresql", "mysql"]
TIMINGS = os.environ.get(
    "HEAT_LITE_CHAOS_TIMINGS",
    os.path.join(tempfile.gettempdir(), "heat_lite_chaos_timings.jsonl"),
)
# heartbeat 0.5 s, liveness 4 s, stall 10 s come from deployment.py.
LIVENESS = 4
STALL = 10


def _report(test, kind, fault, seconds):
    print(
        "\nCHAOS %s [%s] %s: %.1f s to COMPLETE" % (test, kind, fault, seconds)
    )
    with open(TIMINGS, "a") as f:
        f.write(
            json.dumps(
                {
                    "test": test,
                    "backend": kind,
                    "fault": fault,
                    "seconds": round(seconds, 1),
                }
            )
            + "\n"
        )


@pytest.fixture
def deploy(tmp_path):
    """Start a deployment of ``kind`` with extra [engine] options."""
    started = []

    def start(kind, **engine_opts):
        # A paused engine keeps the messages RabbitMQ already gave it (API
        # calls, resource checks) until the broker drops its connection for
        # missed AMQP heartbeats and re-queues them: make that quick, and
        # let the API give up on such a call soon (the tests ask again).
        extra = (
            "\n[api]\nrpc_timeout = 10\n"
            "[oslo_messaging_rabbit]\nheartbeat_timeout_threshold = 5\n"
            "[engine]\n"
            + "".join("%s = %s\n" % item for item in engine_opts.items())
        )
        dep = deployment_mod.Deployment(
            kind, tmp_path / kind, extra_conf=extra
        )
        os.makedirs(dep.workdir, exist_ok=True)
        started.append(dep)
        return dep.start()

    yield start
    for dep in started:
        dep.stop()


# Helpers ---------------------------------------------------------------------
def _db_url(dep):
    with open(dep.config) as f:
        for line in f:
            if line.startswith("connection = "):
                return line.split(" = ", 1)[1].strip()
    raise AssertionError("no connection in config")


def _query(dep, sql):
    engine = sa.create_engine(_db_url(dep))
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql)).all()
    finally:
        engine.dispose()


def _lock_holders(dep):
    """PIDs of the engines holding resource locks right now."""
    return {
        row[0]
        for row in _query(
            dep,
            "SELECT DISTINCT s.pid FROM resource r JOIN service s ON "
            "s.engine_id = r.engine_id WHERE r.engine_id IS NOT NULL",
        )
    }


def _retrying(call, timeout=60):
    """``call()``, asked again while the API answers 503 (its RPC call
    went to an engine that is paused or stopping)."""
    return polling.retrying(call, heat_exc.HTTPServiceUnavailable, timeout)


def _wait_status(heat, stack_id, expected, timeout=60):
    # A 503 (the API's call went to an engine that is paused or
    # stopping) ends one wait; the next one goes on.
    return polling.retrying(
        lambda: helpers.wait_for_status(heat, stack_id, expected, timeout),
        heat_exc.HTTPServiceUnavailable,
        timeout,
    )


def _holder(dep):
    """An engine worker PID that holds a lock (an action is in flight)."""
    pids = set(dep.engine_pids())
    return sorted(
        polling.until(
            lambda: _lock_holders(dep) & pids, what="an engine holding a lock"
        )
    )[0]


def _ledger_lines(dep):
    if not os.path.exists(dep.ledger):
        return []
    with open(dep.ledger) as f:
        return [line.split() for line in f if line.strip()]


def _creates_by_name(dep, stack_name):
    """{resource name: physical IDs created} for one stack.

    A physical ID is ``<stack>-<name>-<record uuid[:12]>-<suffix>`` (the
    uuid part has a hyphen).
    """
    found = collections.defaultdict(list)
    prefix = stack_name + "-"
    for event, physical_id in _ledger_lines(dep):
        if event == "create" and physical_id.startswith(prefix):
            name = physical_id[len(prefix) :].rsplit("-", 3)[0]
            found[name].append(physical_id)
    return found


def _assert_created_once(dep, stack_name, names, extra=None):
    """Every resource was created once (plus ``extra[name]`` times)."""
    creates = _creates_by_name(dep, stack_name)
    counts = {n: len(creates.get(n, ())) for n in names}
    expected = {n: 1 + (extra or {}).get(n, 0) for n in names}
    assert counts == expected, "created twice: %s" % {
        n: creates[n] for n in names if counts[n] != expected[n]
    }


def _assert_deleted_once(dep):
    deletes = collections.Counter(
        p for e, p in _ledger_lines(dep) if e == "delete"
    )
    twice = sorted(p for p, n in deletes.items() if n > 1)
    assert not twice, "deleted twice: %s" % twice


def _stop_engines(dep):
    """SIGTERM the engine supervisor and its workers; wait for exit."""
    key = "all" if dep.kind == "sqlite" else "engine"
    proc = dep.procs[key]
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def _start_engines(dep):
    if dep.kind == "sqlite":
        dep._spawn("all", "heat-lite-all")
        dep._wait_for_api()
    else:
        dep._spawn(
            "engine", "heat-lite-engine", "--workers", str(dep.engine_workers)
        )
        polling.until(
            lambda: dep.engines_up() >= dep.engine_workers, what="engines up"
        )


def _layers(layers, width, wait, **props):
    """``layers`` of ``width`` TestResources, each layer depending on the
    previous one."""
    resources = {}
    for layer in range(layers):
        for i in range(width):
            res = {
                "type": TR,
                "properties": dict({"value": "v", "wait_secs": wait}, **props),
            }
            if layer:
                res["depends_on"] = [
                    "l%dr%d" % (layer - 1, j) for j in range(width)
                ]
            resources["l%dr%d" % (layer, i)] = res
    return resources


def _delete_all(dep, heat, stack_ids):
    for stack_id in stack_ids:
        _retrying(lambda s=stack_id: heat.stacks.delete(s))
    for stack_id in stack_ids:
        _wait_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert_no_leaks(dep)
    _assert_deleted_once(dep)


# Graceful stop ---------------------------------------------------------------
@pytest.mark.parametrize("kind", MULTI)
def test_sigterm_one_engine_mid_create(deploy, kind):
    """The stopped engine finishes what it runs; nothing is stranded."""
    dep = deploy(kind, graceful_shutdown_timeout=10)
    heat = dep.client()
    resources = _layers(2, 4, 2)
    stack_id = helpers.create(heat, "sigterm1", helpers.template(resources))
    victim = _holder(dep)
    os.kill(victim, signal.SIGTERM)
    fault = time.time()
    _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    _report(
        "sigterm_one_engine_mid_create",
        kind,
        "SIGTERM 1 of 2",
        time.time() - fault,
    )
    polling.until(
        lambda: victim not in dep.engine_pids(), what="victim exited"
    )
    _assert_created_once(dep, "sigterm1", resources)
    _delete_all(dep, heat, [stack_id])


@pytest.mark.alone  # bounds every call's seconds
@pytest.mark.parametrize("kind", MULTI)
def test_sigterm_answers_every_api_call_in_flight(deploy, kind):
    """API calls keep flowing while one engine stops: none is lost (the
    stopping engine answers what it took before it exits)."""
    dep = deploy(kind, graceful_shutdown_timeout=2)
    heat = dep.client()
    victim = dep.engine_pids()[0]
    stop = threading.Event()
    calls, failures = [], []

    def hammer():
        while not stop.is_set():
            started = time.time()
            try:
                list(heat.stacks.list(limit=1))
            except Exception as exc:  # noqa: BLE001 - what the test counts
                failures.append(repr(exc))
            calls.append(time.time() - started)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        polling.until(lambda: len(calls) > 20, what="calls flowing")
        os.kill(victim, signal.SIGTERM)
        polling.until(
            lambda: victim not in dep.engine_pids(), what="victim exited"
        )
        before = len(calls)
        polling.until(lambda: len(calls) > before + 40, what="more calls")
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not failures, failures[:3]
    # A read the stopping engine took and never answered is given up by
    # the call monitor ([api] rpc_call_monitor_timeout, 5 s) and asked
    # again: never the whole rpc_timeout.
    assert max(calls) < 9, "a call took %.1f s" % max(calls)


@pytest.mark.alone  # the bound includes starting the engines again
@pytest.mark.parametrize("kind", ["sqlite"] + MULTI)
def test_sigterm_all_engines_then_fresh_ones(deploy, kind):
    """Every engine stops mid-create, handing over what did not finish in
    time; fresh engines finish the stack without waiting for a timeout."""
    dep = deploy(kind, graceful_shutdown_timeout=0.5)
    heat = dep.client()
    resources = _layers(2, 4, 3)
    stack_id = helpers.create(heat, "sigtermall", helpers.template(resources))
    if kind == "sqlite":
        polling.until(
            lambda: _query(
                dep, "SELECT id FROM resource WHERE engine_id IS NOT NULL"
            ),
            what="a lock",
        )
    else:
        _holder(dep)
    _stop_engines(dep)
    time.sleep(2)  # the fault: no engine at all for a while
    fault = time.time()
    _start_engines(dep)
    heat = dep.client()
    _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    elapsed = time.time() - fault
    _report(
        "sigterm_all_engines_then_fresh_ones",
        kind,
        "SIGTERM all, fresh ones 2 s later",
        elapsed,
    )
    # Neither the liveness timeout nor the stall timeout was waited for.
    assert elapsed < STALL
    _assert_created_once(dep, "sigtermall", resources)
    _delete_all(dep, heat, [stack_id])


# Engine deaths ---------------------------------------------------------------
def _half_replaced(round_no):
    """A template whose even resources are replaced, odd ones updated in
    place, for update round ``round_no``."""
    resources = {}
    for i in range(6):
        props = {
            "value": "v%d" % (round_no if i % 2 else 0),
            "update_replace_value": "u%d" % (0 if i % 2 else round_no),
            "wait_secs": 1.5,
        }
        resources["r%d" % i] = {"type": TR, "properties": props}
    return resources


@pytest.mark.alone  # bounds each recovery's seconds
@pytest.mark.parametrize("kind", MULTI)
def test_kill9_mid_update_replacing_half_five_times(deploy, kind):
    dep = deploy(kind)
    heat = dep.client()
    stack_id = helpers.create(
        heat, "kill9upd", helpers.template(_half_replaced(0))
    )
    _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    times = []
    for round_no in range(1, 6):
        _retrying(
            lambda r=round_no: heat.stacks.update(
                stack_id, template=helpers.template(_half_replaced(r))
            )
        )
        victim = _holder(dep)
        os.kill(victim, signal.SIGKILL)
        fault = time.time()
        _wait_status(heat, stack_id, "UPDATE_COMPLETE", timeout=60)
        times.append(time.time() - fault)
        _report(
            "kill9_mid_update_replacing_half",
            kind,
            "kill -9 #%d" % round_no,
            times[-1],
        )
        created, deleted = _ledger_sets(dep)
        current = {
            r.physical_resource_id
            for r in _retrying(lambda: heat.resources.list(stack_id))
        }
        assert created - deleted == current
    # Each replaced resource was created once per round, never twice.
    _assert_created_once(
        dep,
        "kill9upd",
        _half_replaced(0),
        extra={"r%d" % i: 5 for i in range(0, 6, 2)},
    )
    assert max(times) < LIVENESS + STALL
    _delete_all(dep, heat, [stack_id])


def _ledger_sets(dep):
    created = {p for e, p in _ledger_lines(dep) if e == "create"}
    deleted = {p for e, p in _ledger_lines(dep) if e == "delete"}
    return created, deleted


@pytest.mark.parametrize("kind", MULTI)
def test_sigstop_past_liveness_then_sigcont(deploy, kind):
    """A paused engine is claimed; the survivor resumes its creates
    without making them again; the zombie, woken up, acts on nothing of
    its old life and goes on working under a new epoch."""
    dep = deploy(kind)
    heat = dep.client()
    resources = _layers(2, 4, 3)
    stack_id = helpers.create(heat, "zombie", helpers.template(resources))
    victim = _holder(dep)
    os.kill(victim, signal.SIGSTOP)
    fault = time.time()
    try:
        _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
        _report(
            "sigstop_past_liveness",
            kind,
            "SIGSTOP (past 4 s)",
            time.time() - fault,
        )
        polling.until(lambda: time.time() - fault > 2 * LIVENESS, what="pause")
    finally:
        os.kill(victim, signal.SIGCONT)
    polling.until(
        lambda: dep.engines_up() >= 2, what="the zombie re-registered"
    )
    # The zombie works again: a second stack uses both engines.
    second = helpers.create(heat, "after", helpers.template(_layers(1, 6, 1)))
    _wait_status(heat, second, "CREATE_COMPLETE", timeout=60)
    _assert_created_once(dep, "zombie", resources)
    _assert_created_once(dep, "after", _layers(1, 6, 1))
    _delete_all(dep, heat, [stack_id, second])


@pytest.mark.parametrize("kind", MULTI)
def test_delete_while_an_engine_is_dead(deploy, kind):
    """An engine is paused (a dead host) during a delete: the delete
    completes, and when it wakes up it deletes nothing a second time."""
    dep = deploy(kind)
    heat = dep.client()
    resources = _layers(1, 8, 0, action_wait_secs={"delete": 3})
    stack_id = helpers.create(heat, "deldead", helpers.template(resources))
    _wait_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    heat.stacks.delete(stack_id)
    victim = _holder(dep)
    os.kill(victim, signal.SIGSTOP)
    fault = time.time()
    try:
        _wait_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
        _report(
            "delete_while_an_engine_is_dead",
            kind,
            "SIGSTOP",
            time.time() - fault,
        )
    finally:
        os.kill(victim, signal.SIGCONT)
    woke = time.time()
    polling.until(
        lambda: dep.engines_up() >= 2, what="the zombie re-registered"
    )
    # Give the zombie's old polls time to come round: they must not
    # delete anything again.
    polling.until(
        lambda: time.time() - woke > 3, what="the zombie's old polls"
    )
    assert_no_leaks(dep)
    _assert_deleted_once(dep)
    _assert_created_once(dep, "deldead", resources)


@pytest.mark.parametrize("kind", MULTI)
def test_ten_stacks_while_an_engine_is_killed_every_10s(deploy, kind):
    dep = deploy(kind)
    heat = dep.client()
    resources = _layers(3, 2, 2)
    names = ["many%d" % i for i in range(10)]
    stack_ids = [
        helpers.create(heat, n, helpers.template(resources)) for n in names
    ]
    fault = None
    # Every 10 s (2 s first) one engine worker is killed, for at most
    # 120 s, until every stack is complete.
    next_kill = 120 - 2
    for left in polling.ticks(120, 0.2):
        states = {
            _retrying(lambda s=s: heat.stacks.get(s)).stack_status
            for s in stack_ids
        }
        if states == {"CREATE_COMPLETE"}:
            break
        assert states <= {"CREATE_IN_PROGRESS", "CREATE_COMPLETE"}, states
        if left <= next_kill:
            pids = dep.engine_pids()
            if pids:
                os.kill(sorted(pids)[0], signal.SIGKILL)
                fault = time.time()
            next_kill = left - 10
    assert states == {"CREATE_COMPLETE"}, states
    _report(
        "ten_stacks_engine_killed_every_10s",
        kind,
        "last kill -9",
        time.time() - fault,
    )
    for name in names:
        _assert_created_once(dep, name, resources)
    _delete_all(dep, heat, stack_ids)
