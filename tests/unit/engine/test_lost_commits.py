"""A finish committed without waiting for the WAL flush, then lost.

On PostgreSQL the finish of a step that did nothing outside the database
commits with ``synchronous_commit`` off (``dialects.postgresql._durable``). A
database crash can lose such a commit after the engine went on: the
engine saw it succeed and ran the next node, which finds its dependency
unconverged and stops (the record the lost finish handed on to it fails
its check: ``worker.handon``). Here the loss is made exact: the finish
of one record runs in a transaction block rolled back, its
answer handed on as if it had committed (what a crash loses is exactly
such a suffix of writes). The stall re-drive must run the lost node
again and the stack end complete, each record finished once in the
database.
"""

import uuid

import pytest
import sqlalchemy as sa

from harness import endpoints, inprocess, polling
from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import models, session
from heat_lite.db.dialects import postgresql as pg_writes

CONF = conf.CONF
CTXT = context.RequestContext(project_id="p", user_id="u")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "postgresql",
        tmp_path_factory.mktemp("lost"),
        {"heartbeat_interval": 0.2, "stall_timeout": 1.0},
    ) as proc:
        inprocess.first_watchdog_pass(proc)
        yield endpoints.Engine(proc.ops, proc.services)


def _chain(names):
    resources = {}
    for i, name in enumerate(names):
        resources[name] = {"type": "OS::Heat::None"}
        if i:
            resources[name]["depends_on"] = names[i - 1]
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _asynchronous(statement):
    return "set_config" in str(statement)


def test_a_lost_instant_finish_is_made_again(engine, monkeypatch):
    real = pg_writes._finish_in_one
    lost = []

    def losing(conn, statement, params, events, entity, handing=None):
        name = events[0]["resource_name"] if events else None
        if name != "b" or lost:
            return real(conn, statement, params, events, entity, handing)
        # Only a finish that did not wait for the WAL can be lost.
        assert _asynchronous(statement)
        # A one-statement finish runs in autocommit (session._autocommits):
        # an explicit transaction block is rolled back around it instead.
        raw = conn.connection.dbapi_connection
        assert raw.autocommit
        conn.exec_driver_sql("BEGIN")
        try:
            answer = real(conn, statement, params, events, entity, handing)
        finally:
            conn.exec_driver_sql("ROLLBACK")
        # The record the lost finish returned is handed on to c, whose
        # read must not take it for what the database holds.
        assert handing and handing[0]["name"] == "b"
        lost.append(answer)
        return answer

    monkeypatch.setattr(pg_writes, "_finish_in_one", losing)
    ident = engine.create_stack(
        CTXT,
        "lost-" + uuid.uuid4().hex[:6],
        _chain("abc"),
        {},
        {},
        None,
        None,
        {},
    )
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE", timeout=60)
    assert lost, "the finish of b was not lost"
    event = models.Event.__table__
    with session.transaction(writer=False) as conn:
        done = conn.execute(
            sa.select(event.c.resource_name).where(
                event.c.stack_id == ident["stack_id"],
                event.c.resource_status == "COMPLETE",
            )
        ).scalars()
        # One COMPLETE each (the stack's own event left out): b's lost
        # finish left nothing, its re-drive wrote it once.
        assert sorted(n for n in done if len(n) == 1) == ["a", "b", "c"]


def test_only_a_finish_without_locks_skips_the_wal_flush(engine):
    """The SQL itself: ``set_config`` is local to its transaction."""
    owner = ("engine", 1)
    assert pg_writes._durable(owner, None)
    assert pg_writes._durable(None, object())
    assert not pg_writes._durable(None, None)
    CONF.set_override("asynchronous_instant_commits", False, group="database")
    try:
        assert pg_writes._durable(None, None)
    finally:
        CONF.clear_override("asynchronous_instant_commits", group="database")
    stmt = pg_writes.finish_in_one({"status"}, False, 0, wait_for_wal=False)
    assert _asynchronous(stmt)
    assert not _asynchronous(
        pg_writes.finish_in_one({"status"}, False, 0, wait_for_wal=True)
    )
    with session.transaction() as conn:
        # What the finish's SELECT does, on its own.
        conn.exec_driver_sql(
            "SELECT set_config('synchronous_commit', 'off', true)"
        )
        inside = conn.exec_driver_sql(
            "SELECT current_setting('synchronous_commit')"
        ).scalar()
    with session.transaction() as conn:
        after = conn.exec_driver_sql(
            "SELECT current_setting('synchronous_commit')"
        ).scalar()
    assert (inside, after) == ("off", "on")
