"""The engine in one process (SQLite file, fake:// transport) with fakes
for what a test must break: a worker API that loses messages; and the
caller's token the engine keeps for the length of an operation."""

import json
import threading
import time
import uuid

import pytest
import sqlalchemy as sa

from harness import inprocess, polling, workers
from heat_lite import conf
from heat_lite.common import context, crypt
from heat_lite.db import api as db_api
from heat_lite.db import caller_tokens, models, session
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.db import traversals as db_traversals
from heat_lite.engine.endpoint import service
from heat_lite.engine.recovery import watchdog
from heat_lite.engine.worker import caller
from heat_lite.resources import base, test_resource
from tests.unit.engine import test_db_unavailable

CONF = conf.CONF


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    # The watchdog's first pass re-drives every stack at once (a fresh
    # engine may follow one that stopped): let it pass before the tests.
    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("inprocess"),
        {
            "heartbeat_interval": 0.2,
            "stall_timeout": 1.0,
            "engine_life_check_timeout": 3.0,
        },
        first_pass=True,
    ) as proc:
        yield proc


def test_lost_messages_are_redriven(engine):
    with workers.losing(engine, lose=1) as losing:
        ctxt = context.RequestContext(project_id="p", user_id="u")
        tmpl = {
            "heat_template_version": "2018-08-31",
            "resources": {
                "a": {"type": "OS::Heat::None"},
                "b": {"type": "OS::Heat::None", "depends_on": "a"},
            },
        }
        ident = service.EngineService(
            engine.ops, engine.services
        ).create_stack(ctxt, "lost", tmpl, {}, {}, None, None, {})
        started = time.time()
        polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
        assert losing.lost, "the first cast was not lost"
        # Re-driven by the watchdog once the stall timeout passed.
        assert time.time() - started >= CONF.engine.stall_timeout * 0.9


def test_watchdog_claims_dead_engines(engine):
    stale = str(uuid.uuid4())
    db_api.service_create(
        {
            "engine_id": stale,
            "host": "h",
            "hostname": "h",
            "binary": "b",
            "topic": "t",
            "pid": 1,
            "report_interval": 1,
        }
    )
    polling.until(
        lambda: (
            stale not in {s["engine_id"] for s in db_api.service_get_all()}
        ),
        30,
        "the stale engine row gone",
        interval=0.2,
    )
    assert engine.engine_id in {
        s["engine_id"] for s in db_api.service_get_all()
    }


@pytest.fixture
def encryption_key():
    CONF.set_override("auth_encryption_key", "k" * 32)
    yield
    CONF.clear_override("auth_encryption_key")


TOKEN = "gAAAAAB-the-callers-token"


def _as_caller():
    return context.RequestContext(
        project_id="p", user_id="u", auth_token=TOKEN, overwrite=False
    )


def _create(engine, name, resources, **args):
    tmpl = {"heat_template_version": "2018-08-31", "resources": resources}
    return service.EngineService(engine.ops, engine.services).create_stack(
        _as_caller(), name, tmpl, {}, {}, None, None, args
    )["stack_id"]


def _in_progress(stack_id, action):
    stack = polling.stack_reaches(stack_id, action + "_IN_PROGRESS")
    return stack, {
        "stack_id": stack_id,
        "stack_tenant": stack["tenant"],
        "name": "r",
    }


def test_the_callers_token_lives_as_long_as_the_operation(
    engine, encryption_key
):
    stack_id = _create(
        engine,
        "tok",
        {
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"wait_secs": 2},
            }
        },
    )
    stack, record = _in_progress(stack_id, "CREATE")
    traversal = stack["current_traversal"]
    kept = caller_tokens.traversal_token(traversal)
    assert kept and TOKEN not in kept
    assert crypt.decrypt(kept) == TOKEN
    ctxt = caller.request_context(record, traversal)
    assert (ctxt.auth_token, ctxt.project_id) == (TOKEN, "p")
    assert caller.keep(context.RequestContext(overwrite=False)) is None

    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    assert db_traversals.traversal_get(traversal) is None
    assert caller_tokens.operation_token(stack_id, traversal) is None
    assert caller.request_context(record, traversal) is None


def test_nested_stacks_and_rollbacks_act_with_the_callers_token(
    engine, encryption_key, hold
):
    with hold("nested"):
        parent_id = _nested_stack_in_progress(engine)
    polling.stack_reaches(parent_id, "CREATE_COMPLETE")
    # A failed create rolls back with the token of the create. ``bad``
    # fails only once ``slow`` is being created (held), so the rollback
    # has ``slow`` to delete, held too, while the test looks.
    with hold("rollback"):
        with hold("gate"):
            stack_id = _create(
                engine,
                "tok-rollback",
                {
                    "bad": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"fail": True, "hold": "gate"},
                    },
                    "slow": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"hold": "rollback"},
                    },
                },
                disable_rollback=False,
            )
            polling.until(
                lambda: (
                    {
                        r["name"]: r["status"]
                        for r in db_records.resource_get_all(stack_id)
                    }.get("slow")
                    == "IN_PROGRESS"
                ),
                30,
                "slow being created",
                interval=0.05,
            )
        stack, record = _in_progress(stack_id, "ROLLBACK")
        ctxt = caller.request_context(record, stack["current_traversal"])
        assert ctxt.auth_token == TOKEN
    polling.stack_reaches(stack_id, "ROLLBACK_COMPLETE")


def _nested_stack_in_progress(engine):
    parent_id = _create(
        engine,
        "tok-nested",
        {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 1,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"hold": "nested"},
                    },
                },
            }
        },
    )
    _in_progress(parent_id, "CREATE")
    children = polling.until(
        lambda: [
            s
            for s in db_stacks.stacks_in_progress()
            if s["owner_id"] == parent_id
        ],
        30,
        "a child stack in progress",
        interval=0.05,
    )
    child, record = _in_progress(children[0]["id"], "CREATE")
    # The engine started the child: its own traversal keeps nothing.
    assert caller_tokens.traversal_token(child["current_traversal"]) is None
    ctxt = caller.request_context(record, child["current_traversal"])
    assert ctxt.auth_token == TOKEN
    return parent_id


def test_nothing_is_kept_without_a_key_or_a_token(engine, hold):
    with hold("no-key"):
        stack_id = _create(
            engine,
            "no-key",
            {
                "slow": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"hold": "no-key"},
                }
            },
        )
        stack, _ = _in_progress(stack_id, "CREATE")
        assert (
            caller_tokens.traversal_token(stack["current_traversal"]) is None
        )
        assert caller.keep(_as_caller()) is None
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")


def test_a_watchdog_pass_costs_a_few_statements_whatever_the_stacks(engine):
    """1,000 in-progress stacks, 4 live engines: a pass of one engine's
    watchdog reads services, stale locks, stacks, the progress marks
    of the stacks it watches (about a quarter) and the idle stacks with a
    queued update (``traversal.queue``): 5 statements (plus its
    heartbeat, 1 UPDATE on its own thread), not one per stack."""
    stacks = models.Stack.__table__
    now = models.utcnow()
    ids = [str(uuid.uuid4()) for _ in range(1000)]
    db = session.get_engine()
    with db.begin() as conn:
        template = conn.execute(
            models.RawTemplate.__table__.insert().values(
                template="{}", environment="{}", files="{}", created_at=now
            )
        ).inserted_primary_key[0]
        conn.execute(
            stacks.insert(),
            [
                {
                    "raw_template_id": template,
                    "id": i,
                    "name": "s" + i[:8],
                    "tenant": "cost",
                    "action": "CREATE",
                    "status": "IN_PROGRESS",
                    "current_traversal": str(uuid.uuid4()),
                    "nested_depth": 0,
                    "disable_rollback": True,
                    "created_at": now,
                    "action_started_at": now,
                }
                for i in ids
            ],
        )
    others = [str(uuid.uuid4()) for _ in range(3)]
    for n, other in enumerate(others):
        db_api.service_create(
            {
                "engine_id": other,
                "host": "h%d" % n,
                "hostname": "h%d" % n,
                "binary": "b",
                "topic": "t",
                "pid": 1,
                "report_interval": 1,
            }
        )
    me = threading.get_ident()
    counted = []

    def count(conn, cursor, statement, *args):
        if threading.get_ident() == me and statement != "BEGIN":
            counted.append(statement.split("\n")[0][:60])

    dog = watchdog.Watchdog(engine.fence, engine.ops, engine.dispatcher)
    # However long the first pass takes on a loaded machine, the second
    # must not find the stacks stalled (that is one read per stack), nor
    # the other engines dead (a CI run at load 29 saw it watch all 1,000).
    life = CONF.engine.engine_life_check_timeout
    CONF.set_override("stall_timeout", 600, group="engine")
    CONF.set_override("engine_life_check_timeout", 600, group="engine")
    try:
        dog.tick()  # the first pass looks at every watched stack
        for other in others:  # alive: nobody claims them meanwhile
            db_api.service_heartbeat(other)
        sa.event.listen(db, "before_cursor_execute", count)
        dog.tick()
        sa.event.remove(db, "before_cursor_execute", count)
        watched = len(dog._progress)
    finally:
        CONF.set_override("stall_timeout", 1.0, group="engine")
        CONF.set_override("engine_life_check_timeout", life, group="engine")
        with db.begin() as conn:
            conn.execute(stacks.delete().where(stacks.c.tenant == "cost"))
    assert 150 < watched < 400
    assert len(counted) == 5, counted


def _locked_record(stack_id, timeout=10):
    locked = polling.until(
        lambda: [
            r for r in db_records.resource_get_all(stack_id) if r["engine_id"]
        ],
        timeout,
        "a locked record of stack %s" % stack_id,
        interval=0.02,
    )
    return db_records.resource_load(locked[0]["id"])


def test_a_duplicate_message_leaves_the_running_action_alone(engine):
    """Two messages for one node reach one engine (a re-drive crossing
    the cast that made it ready): the second read the record before the
    first took its lock, so its own lock attempt fails. The first action
    must stay this engine's, or the watchdog takes it for an orphan,
    fails it and the record is replaced: the resource made twice."""
    stack_id = _create(
        engine,
        "duplicate",
        {
            "r": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "v", "wait_secs": 3},
            }
        },
    )
    record = _locked_record(stack_id)
    assert record["id"] in engine.runner.active_records()
    # What the duplicate read: the record just before the first lock.
    before = dict(
        record,
        engine_id=None,
        lock_epoch=None,
        atomic_key=record["atomic_key"] - 1,
        action="INIT",
    )
    assert (
        engine.runner.locks.take(before, record["lock_traversal"], "CREATE")
        is None
    )
    assert record["id"] in engine.runner.active_records()
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    (after,) = db_records.resource_get_all(stack_id)
    assert after["id"] == record["id"]
    assert after["status_reason"] == "state changed"


def test_an_orphaned_create_is_found_not_made_again(
    engine, tmp_path, monkeypatch
):
    """The engine loses track of a create it runs (its lock is an orphan
    the watchdog releases as an internal error): the outcome is unknown,
    so the re-driven node asks the plugin what the create made and keeps
    it -- the same record, one physical resource.

    The forgotten create is held at its first completion check until the
    watchdog has released its lock, whatever the load: a create that
    finished first would leave no orphan to release."""
    released, go = threading.Event(), threading.Event()
    real_check = test_resource.TestResource.check_create_complete

    def check(plugin, cookie):
        if plugin.name == "r" and not released.is_set():
            released.set()
            go.wait(30)
        return real_check(plugin, cookie)

    monkeypatch.setattr(
        test_resource.TestResource, "check_create_complete", check
    )
    ledger = tmp_path / "ledger"
    CONF.set_override("test_resource_ledger", str(ledger), group="engine")
    try:
        stack_id = _create(
            engine,
            "orphan",
            {
                "r": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": "v"},
                }
            },
        )
        assert released.wait(10)
        record = _locked_record(stack_id)
        engine.runner.locks.unlocked(record["id"])  # the action is forgotten
        try:
            polling.until(
                lambda: INTERNAL_CREATE in _reasons(stack_id),
                120,  # a pass of the watchdog is slow at load 29
                "the watchdog to release the orphaned lock",
            )
        finally:
            go.set()
        polling.stack_reaches(stack_id, "CREATE_COMPLETE")
        (after,) = db_records.resource_get_all(stack_id)
        created, _ = test_resource.read_ledger(str(ledger))
    finally:
        CONF.clear_override("test_resource_ledger", group="engine")
    assert after["id"] == record["id"]
    assert len(created) == 1, created
    assert after["physical_resource_id"] in created


INTERNAL_CREATE = "Internal error during resource CREATE"


def _reasons(stack_id):
    return [
        e["resource_status_reason"] for e in db_api.event_get_all(stack_id)
    ]


def test_an_orphaned_update_in_place_is_made_again(engine, monkeypatch):
    """The engine loses track of an in-place update after taking the
    record's lock (it stored the new properties) and before the plugin
    did the work -- a kill -9, or a lock the watchdog takes for an orphan.
    The re-driven node must ask the plugin to update again: the stored
    properties already equal the goal, and a node that compared only
    those would mark the record converged on a resource never updated."""
    started, go = threading.Event(), threading.Event()
    calls = []
    real_update = test_resource.TestResource.handle_update

    def handle_update(plugin, new_props, prop_diff):
        calls.append(sorted(prop_diff))
        if plugin.name == "lost" and not started.is_set():
            started.set()
            go.wait(30)
            # The forgotten action never did its work (its writes would be
            # refused anyway: the lock is gone).
            return {"start": time.time(), "wait": 0, "action": "update"}
        return real_update(plugin, new_props, prop_diff)

    monkeypatch.setattr(
        test_resource.TestResource, "handle_update", handle_update
    )
    resources = {
        "lost": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": "v1"},
        }
    }
    stack_id = _create(engine, "orphan-update", resources)
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    resources["lost"]["properties"]["value"] = "v2"
    tmpl = {"heat_template_version": "2018-08-31", "resources": resources}
    service.EngineService(engine.ops, engine.services).update_stack(
        _as_caller(), {"stack_id": stack_id}, tmpl, {}, {}, None, None, {}
    )
    try:
        assert started.wait(10)
        record = _locked_record(stack_id)
        engine.runner.locks.unlocked(record["id"])  # the action is forgotten
        polling.stack_reaches(stack_id, "UPDATE_COMPLETE")
    finally:
        go.set()
    (after,) = db_records.resource_get_all(stack_id)
    assert after["id"] == record["id"]
    assert json.loads(after["rsrc_data"] or "{}").get("value") == "v2"
    assert calls == [["value"], ["value"]]


def test_a_zombie_step_never_fails_what_the_new_life_finished(
    engine, monkeypatch
):
    """The engine is claimed while a step of an action runs (a partition,
    a long pause), registers again under a new epoch, and the stack is
    finished by the takeover. When that old step resumes, its writes are
    refused (the lock is gone) -- and that refusal must not fail the
    record the new life completed."""
    started, go = threading.Event(), threading.Event()
    real_check = test_resource.TestResource.check_create_complete

    def check(plugin, cookie):
        if plugin.name == "zombie" and not started.is_set():
            started.set()
            go.wait(30)
            plugin.data_set("late", True)  # progress to write
            raise base.PollDelay(0.01)
        return real_check(plugin, cookie)

    monkeypatch.setattr(
        test_resource.TestResource, "check_create_complete", check
    )
    stack_id = _create(
        engine,
        "zombie",
        {"zombie": {"type": "OS::Heat::TestResource", "properties": {}}},
    )
    try:
        assert started.wait(10)
        epoch = engine.fence.epoch
        db_api.service_delete(engine.engine_id, epoch)  # claimed as dead
        polling.until(
            lambda: engine.fence.epoch != epoch,
            10,
            "the engine re-registered",
            interval=0.05,
        )
        polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    finally:
        go.set()

    def finished_and_unlocked():
        (record,) = db_records.resource_get_all(stack_id)
        return (record["action"], record["status"], record["engine_id"]) == (
            "CREATE",
            "COMPLETE",
            None,
        )

    # The zombie step resumes meanwhile and is refused.
    polling.stays(finished_and_unlocked, 1.0, "the record the new life made")
    (record,) = db_records.resource_get_all(stack_id)
    assert (record["action"], record["status"]) == ("CREATE", "COMPLETE")
    assert record["engine_id"] is None
    assert polling.stack_reaches(stack_id, "CREATE_COMPLETE")


def test_a_refused_connection_after_the_lock_leaves_nothing_stuck(
    engine, monkeypatch, caplog
):
    """A worker takes a record's lock, and the very next step of the job
    meets a refused connection (the database is out of connection slots;
    this engine stays alive and is never fenced). The exception unwinds
    the job: its lock must not stay this live engine's for ever (the
    watchdog neither re-drives a locked node nor takes over a lock an
    action of its holder still claims). It is left to the takeover and
    the stack converges, with a warning and no traceback."""
    # The real error of a refused connection at checkout (psycopg2's
    # OperationalError through SQLAlchemy).
    refused = test_db_unavailable._refused()
    real_start = engine.runner.actions.start
    hits = []

    def start(job, handle, on_replace=None):
        if job.record["name"] == "refused" and not hits:
            hits.append(job.record["id"])
            raise refused
        return real_start(job, handle, on_replace)

    monkeypatch.setattr(engine.runner.actions, "start", start)
    caplog.set_level("INFO")
    stack_id = _create(
        engine,
        "refused",
        {"refused": {"type": "OS::Heat::TestResource", "properties": {}}},
    )
    polling.until(lambda: hits, 10, "the refused step", interval=0.02)
    # Well within the stall timeout plus a few watchdog passes.
    polling.stack_reaches(stack_id, "CREATE_COMPLETE", timeout=15)
    (record,) = db_records.resource_get_all(stack_id)
    assert record["id"] == hits[0]
    assert record["engine_id"] is None
    assert record["id"] not in engine.runner.active_records()
    warned = [
        r
        for r in caplog.records
        if r.levelname == "WARNING" and str(hits[0]) in r.getMessage()
    ]
    assert warned, [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.exc_info], [
        r.getMessage() for r in caplog.records if r.exc_info
    ]


def _create_cut_short(engine, monkeypatch, tmp_path, name):
    """Create a TestResource whose first check blocks: the handler made
    the physical resource (the ledger has it), the ID waits for the
    finish; then the engine loses track of the action (its lock is an
    orphan the watchdog releases). Returns (stack id, ledger, release)."""
    ledger = tmp_path / "ledger"
    CONF.set_override("test_resource_ledger", str(ledger), group="engine")
    started, go = threading.Event(), threading.Event()
    real_check = test_resource.TestResource.check_create_complete

    def check(plugin, cookie):
        if plugin.name == name and not started.is_set():
            started.set()
            go.wait(30)
        return real_check(plugin, cookie)

    monkeypatch.setattr(
        test_resource.TestResource, "check_create_complete", check
    )
    stack_id = _create(
        engine,
        name,
        {name: {"type": "OS::Heat::TestResource", "properties": {}}},
    )
    assert started.wait(10)
    record = _locked_record(stack_id)
    created, _ = test_resource.read_ledger(str(ledger))
    # The write of the ID is the finish's (one transaction less).
    assert len(created) == 1 and record["physical_resource_id"] is None
    engine.runner.locks.unlocked(record["id"])  # the action is forgotten
    return stack_id, str(ledger), go.set


def test_a_create_cut_short_before_its_id_was_stored_is_found(
    engine, monkeypatch, tmp_path
):
    """An engine that dies after the cloud made the resource and before
    the finish stored its physical ID leaks nothing: the re-driven create
    asks the plugin what it made (find_created) and keeps it."""
    try:
        stack_id, ledger, release = _create_cut_short(
            engine, monkeypatch, tmp_path, "cut"
        )
        try:
            polling.stack_reaches(stack_id, "CREATE_COMPLETE")
        finally:
            release()
        (after,) = db_records.resource_get_all(stack_id)
        created, deleted = test_resource.read_ledger(ledger)
    finally:
        CONF.clear_override("test_resource_ledger", group="engine")
    assert created == {after["physical_resource_id"]} and not deleted


def test_a_create_cut_short_before_its_id_was_stored_is_deleted(
    engine, monkeypatch, tmp_path
):
    """The same create, its stack deleted before anything re-drives it:
    the record holds no physical ID, and the cleanup asks the plugin what
    the create made before it deletes -- nothing leaks."""
    try:
        stack_id, ledger, release = _create_cut_short(
            engine, monkeypatch, tmp_path, "gone"
        )
        try:
            service.EngineService(engine.ops, engine.services).delete_stack(
                _as_caller(), {"stack_id": stack_id}
            )
            polling.until(
                lambda: (
                    db_api.stack_state(stack_id) is None
                    or db_api.stack_state(stack_id)[1:]
                    == ("DELETE", "COMPLETE")
                ),
                30,
                "the stack deleted",
            )
        finally:
            release()
        created, deleted = test_resource.read_ledger(ledger)
    finally:
        CONF.clear_override("test_resource_ledger", group="engine")
    assert len(created) == 1 and created == deleted
