"""An unreachable database is told apart from a failed statement, reads
are retried past a dropped connection, and a pooled connection broken
while it sat idle is replaced instead of failing its next transaction.

The errors are real: a connection to a port nobody listens on, and our
own session killed on the shared PostgreSQL / MariaDB (only this test's
connection, in a private database).
"""

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines

from harness import backends
from harness.deployment import free_port
from heat_lite.db import pre_ping, session

KINDS = ["postgresql", "mysql"]
_CLOSED = {
    "postgresql": "postgresql+psycopg2://postgres@127.0.0.1:%d/x",
    "mysql": "mysql+pymysql://root@127.0.0.1:%d/x",
}
# How a session kills itself on each backend.
_SUICIDE = {
    "postgresql": "SELECT pg_terminate_backend(pg_backend_pid())",
    "mysql": "KILL CONNECTION_ID()",
}
_KILL = {
    "postgresql": "SELECT pg_terminate_backend(%d)",
    "mysql": "KILL %d",
}
_BACKEND_ID = {
    "postgresql": "SELECT pg_backend_pid()",
    "mysql": "SELECT CONNECTION_ID()",
}


def _oslo_engine(url, ping=False):
    """An engine as heat_lite gets it: oslo.db's, with its error filters,
    pre-ping as ``[database] pool_pre_ping`` says (off by default)."""
    return engines.create_engine(
        pre_ping.url(url, ping), max_pool_size=2, max_retries=0
    )


def _raised(engine, statement="SELECT 1"):
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(statement))
    except Exception as exc:  # noqa: BLE001 - the error under test
        return exc
    raise AssertionError("no error raised")


@pytest.fixture(params=KINDS)
def database(request):
    url, drop = backends.create_database(request.param)
    engine = _oslo_engine(url)
    yield request.param, engine
    engine.dispose()
    drop()


@pytest.mark.parametrize("kind", KINDS)
def test_connection_refused_is_unavailable(kind):
    engine = sa.create_engine(_CLOSED[kind] % free_port())
    try:
        assert session.is_unavailable(_raised(engine))
    finally:
        engine.dispose()


def test_dropped_connection_is_unavailable(database):
    kind, engine = database
    exc = _raised(engine, _SUICIDE[kind])
    assert session.is_unavailable(exc), repr(exc)


def test_statement_errors_are_not_unavailable(database):
    _, engine = database
    assert not session.is_unavailable(_raised(engine, "SELEC 1"))
    assert not session.is_unavailable(
        _raised(engine, "SELECT * FROM no_table")
    )
    assert not session.is_unavailable(ValueError("x"))
    assert session.is_unavailable(db_exc.DBConnectionError())


def test_retry_read_runs_a_read_again_after_a_disconnect():
    engine = sa.create_engine(_CLOSED["postgresql"] % free_port())
    refused = _raised(engine)
    engine.dispose()
    calls = []

    @session.retry_read
    def read():
        calls.append(1)
        if len(calls) == 1:
            raise refused
        return "rows"

    assert read() == "rows" and len(calls) == 2

    @session.retry_read
    def broken():
        calls.append(1)
        raise ValueError("a bug is not retried")

    calls.clear()
    with pytest.raises(ValueError):
        broken()
    assert len(calls) == 1


def _kill_pooled_connection(kind, engine):
    """Check a connection in, then kill its server session from outside
    the pool (as a database restart does)."""
    with engine.connect() as conn:
        backend = conn.execute(sa.text(_BACKEND_ID[kind])).scalar()
    killer = sa.create_engine(engine.url, poolclass=sa.pool.NullPool)
    with killer.connect() as conn:
        conn.execute(sa.text(_KILL[kind] % backend))
    killer.dispose()


def test_idle_pooled_connection_broken_by_a_restart_is_replaced(
    database, monkeypatch
):
    kind, engine = database
    # Without the idle ping the next transaction gets the dead connection.
    _kill_pooled_connection(kind, engine)
    assert session.is_unavailable(_raised(engine))
    session.install_idle_ping(engine)
    monkeypatch.setattr(session, "_PING_IF_IDLE_SECONDS", 0.0)
    _kill_pooled_connection(kind, engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT 1")).scalar() == 1


def test_pool_pre_ping_replaces_a_broken_connection_without_idle_ping(
    database,
):
    kind, off = database
    # The plugin's parameter reached the pool: off, the dead connection
    # fails the next transaction (above); on, it is replaced.
    engine = _oslo_engine(off.url.render_as_string(hide_password=False), True)
    try:
        assert not {"plugin", "heat_lite_pre_ping"} & set(engine.url.query)
        _kill_pooled_connection(kind, engine)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


def test_a_busy_sqlite_file_is_unavailable(tmp_path):
    """A write that waited past the busy timeout for another connection's
    write lock may succeed later (an engine re-drives the node); a
    statement error on SQLite is still the statement's."""
    url = "sqlite:///%s" % (tmp_path / "busy.sqlite")
    holder = sa.create_engine(url)
    waiter = _oslo_engine(url + "?timeout=0.1")
    try:
        with holder.connect() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            conn.commit()
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            busy = _raised(waiter, "INSERT INTO t VALUES (1)")
            conn.rollback()
        assert "database is locked" in str(busy), busy
        assert session.is_unavailable(busy)
        assert not session.is_unavailable(_raised(waiter, "SELEC 1"))
    finally:
        holder.dispose()
        waiter.dispose()
