"""Statements run on the driver's cursor (db.direct), and a read continued
by the next write (session.continued), on SQLite, PostgreSQL and MariaDB.

What Core does around a statement must still happen: the transaction is
committed, the statement counters see it, driver errors are translated by
oslo.db's filters, timestamps come back as datetimes.
"""

import datetime
import threading
import uuid

import psycopg2.extensions as psycopg2_ext
import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import direct, models, session, statements
from heat_lite.db import events as db_events
from heat_lite.db import finish as db_finish
from heat_lite.db import locks as db_locks
from heat_lite.db import records as db_records
from heat_lite.db import sync_points as db_sync_points
from tests.unit.db import rows

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__


def test_a_write_is_committed_and_counted(database):
    _, engine = database
    stack_id, _ = rows.stack()
    seen = []

    def count(conn, cursor, statement, *args):
        if statement != "BEGIN":
            seen.append(statement)

    when = datetime.datetime(2026, 1, 2, 3, 4, 5, 6)
    events = [rows.event(stack_id, created_at=when), rows.event(stack_id)]
    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        with session.transaction() as conn:
            db_events.event_insert(conn, *events)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    if engine.dialect.name == "postgresql":
        # Prepared on this connection once (unless an earlier test did),
        # then run by name.
        name = seen[-1].split("(")[0].split()[1]
        assert seen[-1].startswith("EXECUTE heat_lite_")
        assert [s.split()[:5] for s in seen[:-1]] in (
            [],
            [["PREPARE", name, "AS", "INSERT", "INTO"]],
        )
    else:
        assert [s.split()[:3] for s in seen] == [["INSERT", "INTO", "event"]]
    stored = dict(rows.events(stack_id))
    # Both rows of the one statement, stored as Core would store them.
    assert stored == {e["uuid"]: e["created_at"] for e in events}


def test_a_read_has_the_types_core_gives(database):
    stack_id, record = rows.stack()
    with session.transaction(writer=False) as conn:
        row = direct.execute(
            conn, statements.record_select(), {"_rid": record}
        ).first()
    with session.transaction(writer=False) as conn:
        core = dict(
            conn.execute(statements.record_select(), {"_rid": record})
            .first()
            ._mapping
        )
    assert row == core
    assert row["created_at"] == datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert row["stack_traversal"] == "trav"


def test_driver_errors_are_translated(database):
    stack_id, _ = rows.stack()
    event = rows.event(stack_id)
    db_events.event_create(event)
    with pytest.raises(db_exc.DBDuplicateEntry):
        with session.transaction() as conn:
            db_events.event_insert(conn, dict(event), rows.event(stack_id))
    # Nothing of the failed transaction stayed.
    assert [u for u, _ in rows.events(stack_id)] == [event["uuid"]]


def test_the_finish_guard_and_sync_point(database):
    stack_id, record = rows.stack()
    with session.transaction() as conn:
        db_sync_points.insert_sync_points(
            conn, stack_id, "trav", {(0, "barrier"): 2}
        )
    finish = dict(
        record_id=record,
        owner=None,
        values={"status": "COMPLETE", "action": "CREATE"},
        traversal="trav",
        phase="update",
        successors=[],
    )

    def events():
        return [rows.event(stack_id)]

    assert db_finish.resource_finish(
        atomic_key=0, events=events(), **finish
    ) == (
        [],
        False,
    )
    # The CAS: the atomic_key seen is gone.
    with pytest.raises(exception.ConcurrentTransaction):
        db_finish.resource_finish(atomic_key=0, events=events(), **finish)
    fired = db_finish.resource_finish(atomic_key=1, events=events(), **finish)
    assert fired == ([(0, "barrier")], False)
    # Two events written (the failed finish wrote none).
    assert len(rows.events(stack_id)) == 2


def _checkouts(engine):
    counted = []
    thread = threading.get_ident()

    def checkout(*args):
        if threading.get_ident() == thread:
            counted.append(1)

    sa.event.listen(engine.pool, "checkout", checkout)
    return counted, lambda: sa.event.remove(engine.pool, "checkout", checkout)


def test_a_kept_read_is_continued_by_the_write(database):
    kind, engine = database
    stack_id, record = rows.stack()
    counted, stop = _checkouts(engine)
    try:
        with db_records.node_scope():
            loaded, _ = db_records.node_load(
                record, "trav", lambda r: None, keep=lambda r: True
            )
            assert loaded["id"] == record
            # A write of one statement (a lock nobody live can take).
            assert not db_locks.resource_lock(
                record, 1, ("nobody", 1), "trav", {}
            )
        # SQLite: read and write stay apart (see session.continued).
        assert len(counted) == (2 if kind == "sqlite" else 1)
        with db_records.node_scope():
            db_records.node_load(
                record, "trav", lambda r: None, keep=lambda r: True
            )
            db_events.event_create(rows.event(stack_id))
        # PostgreSQL: the read ran in autocommit; a write not marked as
        # one statement gets a transaction (and a connection) of its own.
        assert len(counted) == {"sqlite": 4, "postgresql": 3, "mysql": 2}[kind]
        with db_records.node_scope():
            db_records.node_load(
                record, "trav", lambda r: None, keep=lambda r: False
            )
            db_events.event_create(rows.event(stack_id))
        assert len(counted) == {"sqlite": 6, "postgresql": 5, "mysql": 4}[kind]
    finally:
        stop()
    assert len(rows.events(stack_id)) == 2


def _transaction_status(conn):
    return conn.connection.dbapi_connection.info.transaction_status


def test_postgresql_reads_and_one_statement_writes_autocommit(database):
    """psycopg2 sends BEGIN as a round trip of its own: a read and a
    one-statement write run without it (no transaction open after the
    statement); a write of several statements still runs in one; no
    connection goes back to the pool in autocommit."""
    kind, engine = database
    if kind != "postgresql":
        pytest.skip("autocommit is used on PostgreSQL only")
    stack_id, record = rows.stack()
    seen = {}
    with session.transaction(writer=False) as conn:
        conn.execute(sa.select(STACK.c.id).where(STACK.c.id == stack_id))
        seen["read"] = _transaction_status(conn)
    with session.transaction(single=True) as conn:
        conn.execute(
            STACK.update().where(STACK.c.id == stack_id).values(tags="x")
        )
        seen["single"] = _transaction_status(conn)
    with session.transaction() as conn:
        conn.execute(
            STACK.update().where(STACK.c.id == stack_id).values(tags="y")
        )
        seen["write"] = _transaction_status(conn)
    with db_records.node_scope():
        db_records.node_load(
            record, "trav", lambda r: None, keep=lambda r: True
        )
        held = session._HELD.connection
        seen["held"] = _transaction_status(held)
        with session.transaction() as conn:
            assert conn is not held
            conn.execute(
                STACK.update().where(STACK.c.id == stack_id).values(tags="z")
            )
            seen["after held"] = _transaction_status(conn)
    assert seen == {
        "read": psycopg2_ext.TRANSACTION_STATUS_IDLE,
        "single": psycopg2_ext.TRANSACTION_STATUS_IDLE,
        "write": psycopg2_ext.TRANSACTION_STATUS_INTRANS,
        "held": psycopg2_ext.TRANSACTION_STATUS_IDLE,
        "after held": psycopg2_ext.TRANSACTION_STATUS_INTRANS,
    }
    # Every pooled connection is transactional again.
    raw = engine.raw_connection()
    try:
        assert not raw.dbapi_connection.autocommit
    finally:
        raw.close()
    with session.transaction(writer=False) as conn:
        tags = conn.execute(
            sa.select(STACK.c.tags).where(STACK.c.id == stack_id)
        ).scalar()
    assert tags == "z"


def test_a_kept_read_is_ended_with_its_scope(database):
    kind, engine = database
    if kind == "sqlite":
        pytest.skip("SQLite keeps no read (see session.continued)")
    stack_id, record = rows.stack()
    out = []
    sa.event.listen(engine.pool, "checkout", lambda *a: out.append(1))
    sa.event.listen(engine.pool, "checkin", lambda *a: out.append(-1))
    with db_records.node_scope():
        db_records.node_load(
            record, "trav", lambda r: None, keep=lambda r: True
        )
        assert session._HELD.connection is not None
        assert sum(out) == 1
    assert session._HELD.connection is None
    assert sum(out) == 0
    # A failing write continuing it gives the connection back too.
    with pytest.raises(db_exc.DBDuplicateEntry):
        with db_records.node_scope():
            db_records.node_load(
                record, "trav", lambda r: None, keep=lambda r: True
            )
            event = rows.event(stack_id)
            db_events.event_create(event)
            db_events.event_create(event)
    assert session._HELD.connection is None
    # PostgreSQL: the first write (not one statement) took a connection
    # of its own.
    assert sum(out) == 0 and len(out) == (8 if kind == "postgresql" else 6)
    assert len(rows.events(stack_id)) == 1


def _prepared_on(conn):
    return {
        name
        for (name,) in conn.exec_driver_sql(
            "SELECT name FROM pg_prepared_statements"
        )
    }


def test_postgresql_prepares_once_per_connection(database):
    """A statement is prepared on a connection once, kept across a
    rolled-back transaction, prepared again on a new connection, and
    sent as text with ``[database] prepared_statements`` off."""
    kind, engine = database
    if kind != "postgresql":
        pytest.skip("PREPARE is used on PostgreSQL only")
    _, record = rows.stack()
    statement = statements.record_select()
    name = direct._compiled(statement, engine.dialect).prepared.name
    seen = []

    def count(conn, cursor, text, *args):
        seen.append(text.split()[0])

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        with engine.connect() as conn:
            conn.info.pop(direct._PREPARED, None)
            conn.exec_driver_sql("DEALLOCATE ALL")
            row = direct.execute(conn, statement, {"_rid": record}).first()
            assert row["id"] == record
            conn.rollback()
            assert name in _prepared_on(conn)
            direct.execute(conn, statement, {"_rid": record})
            conn.rollback()
            conf.CONF.set_override(
                "prepared_statements", False, group="database"
            )
            try:
                plain = direct.execute(conn, statement, {"_rid": record})
            finally:
                conf.CONF.clear_override(
                    "prepared_statements", group="database"
                )
            assert plain.first() == row
            conn.invalidate()
            conn.rollback()
            direct.execute(conn, statement, {"_rid": record})
            assert name in _prepared_on(conn)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    words = [w for w in seen if w not in ("DEALLOCATE", "SELECT")]
    # The plain SELECT (option off) starts with SELECT and is left out.
    assert words == ["PREPARE", "EXECUTE", "EXECUTE", "PREPARE", "EXECUTE"]


def test_a_lost_prepared_statement_is_prepared_again(database):
    """A server session reset under the pool (DISCARD ALL, a pooler)
    fails that one transaction; the next prepares again."""
    kind, engine = database
    if kind != "postgresql":
        pytest.skip("PREPARE is used on PostgreSQL only")
    _, record = rows.stack()
    statement = statements.record_select()
    with engine.connect() as conn:
        direct.execute(conn, statement, {"_rid": record})
        conn.rollback()
        conn.exec_driver_sql("DEALLOCATE ALL")
        conn.commit()
        with pytest.raises(Exception) as caught:
            direct.execute(conn, statement, {"_rid": record})
        assert direct._pgcode(caught.value) == "26000"
        conn.rollback()
        row = direct.execute(conn, statement, {"_rid": record}).first()
        assert row["id"] == record


def test_a_finish_with_a_successor_and_a_gone_traversal(database):
    """The finish's answer is the same on every dialect (PostgreSQL: one
    statement): a successor fires when its count reaches zero; a sync
    point that is gone means the traversal was superseded."""
    stack_id, record = rows.stack()
    # Entity 7 is no record: a traversal of this test's own, so that no
    # other test's record 7 meets its sync point.
    trav = stack_id
    with session.transaction() as conn:
        db_sync_points.insert_sync_points(
            conn, stack_id, trav, {(7, "update"): 2}
        )
    finish = dict(
        record_id=record,
        owner=None,
        values={"status": "COMPLETE", "action": "CREATE"},
        phase="update",
    )
    ev = [rows.event(stack_id)]
    assert db_finish.resource_finish(
        atomic_key=0, events=ev, traversal=trav, successors=[7], **finish
    ) == ([], False)
    assert db_finish.resource_finish(
        atomic_key=1,
        events=[rows.event(stack_id)],
        traversal=trav,
        successors=[7],
        **finish,
    ) == ([(7, "update")], False)
    # No sync point in another traversal: superseded, the record written.
    assert db_finish.resource_finish(
        atomic_key=2, events=[], traversal="gone", successors=[7], **finish
    ) == ([], True)
    assert db_records.resource_load(record)["atomic_key"] == 3
    assert len(rows.events(stack_id)) == 2


def _synchronous_commit_at_finish(engine, **finish):
    """What ``synchronous_commit`` the commit of the finish's statement
    has: the statement runs in autocommit (no transaction open after it:
    it committed on its own), so a ``set_config(..., true)`` in it
    applies to its own commit and to nothing after it (the commit reads
    the setting before the transaction's settings are undone; measured
    here: such a commit 0.03 ms, a flushed one 0.46-0.90 ms)."""
    seen = []

    def look(conn, cursor, statement, parameters, *args):
        if statement.startswith("WITH finished AS"):
            status = cursor.connection.info.transaction_status
            assert status == psycopg2_ext.TRANSACTION_STATUS_IDLE, status
            # set_config(%(..)s, %(..)s, true): its values are parameters.
            local = "set_config(" in statement and ", true)" in statement
            sets = {"synchronous_commit", "off"} <= set(parameters.values())
            seen.append("off" if local and sets else "on")

    # As text, so that the finish is recognisable by its SQL.
    conf.CONF.set_override("prepared_statements", False, group="database")
    sa.event.listen(engine, "after_cursor_execute", look)
    try:
        db_finish.resource_finish(**finish)
    finally:
        sa.event.remove(engine, "after_cursor_execute", look)
        conf.CONF.clear_override("prepared_statements", group="database")
    return seen


def test_an_unlocked_finish_does_not_wait_for_the_wal(database):
    """The finish of a record never locked sets ``synchronous_commit``
    off for its own transaction only; with
    ``[database] asynchronous_instant_commits`` off it waits."""
    kind, engine = database
    if kind != "postgresql":
        pytest.skip("the one-statement finish is PostgreSQL's")
    stack_id, record = rows.stack()
    traversal = str(uuid.uuid4())
    with session.transaction() as conn:
        db_sync_points.insert_sync_points(
            conn, stack_id, traversal, {(0, "barrier"): 3}
        )
    finish = dict(
        record_id=record,
        owner=None,
        values={"status": "COMPLETE"},
        traversal=traversal,
        phase="update",
        successors=[],
    )
    assert _synchronous_commit_at_finish(
        engine, atomic_key=0, events=[rows.event(stack_id)], **finish
    ) == ["off"]
    conf.CONF.set_override(
        "asynchronous_instant_commits", False, group="database"
    )
    try:
        assert _synchronous_commit_at_finish(
            engine, atomic_key=1, events=[rows.event(stack_id)], **finish
        ) == ["on"]
    finally:
        conf.CONF.clear_override(
            "asynchronous_instant_commits", group="database"
        )
    # SET LOCAL: the next transaction of the pool waits again.
    with session.transaction() as conn:
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"


def test_set_config_in_an_autocommit_statement_is_its_own(database):
    kind, engine = database
    if kind != "postgresql":
        pytest.skip("PostgreSQL's set_config")
    with session.transaction(writer=False) as conn:
        inside = conn.exec_driver_sql(
            "SELECT set_config('synchronous_commit', 'off', true), "
            "current_setting('synchronous_commit')"
        ).one()
        after = conn.exec_driver_sql("SHOW synchronous_commit").scalar()
    assert (tuple(inside), after) == (("off", "off"), "on")


def test_a_handed_record_is_taken_in_the_successors_read(database):
    """The finish hands on the record it wrote: PostgreSQL the whole row
    (its finish returns it), MariaDB and SQLite its id. The successor's
    read takes it for the dependency's own read, in the same statement,
    only while the database still holds it converged in the traversal
    (PostgreSQL: with the atomic_key handed on)."""
    kind, engine = database
    stack_id, first = rows.stack()
    template = db_records.resource_load(first)["template_id"]
    second = rows.second_record(stack_id, template)
    with session.transaction() as conn:
        db_sync_points.insert_sync_points(
            conn, stack_id, "trav", {(second, "update"): 1}
        )
    handing = []
    fired = db_finish.resource_finish(
        first,
        0,
        None,
        {
            "status": "COMPLETE",
            "action": "CREATE",
            "physical_resource_id": "x",
        },
        [rows.event(stack_id)],
        "trav",
        "update",
        [second],
        handing=handing,
    )
    assert fired == ([(second, "update")], False)
    (handed,) = handing
    stored = db_records.resource_load(first)
    if kind == "postgresql":
        assert {k: stored[k] for k in handed} == handed
        assert (handed["atomic_key"], handed["physical_resource_id"]) == (
            1,
            "x",
        )
    else:
        assert handed == {"id": first}
    as_read = {
        k: v for k, v in stored.items() if k not in statements.STACK_KEYS
    }

    def load(handed):
        return rows.statements_of(
            engine,
            lambda: db_records.node_load(
                second, "trav", lambda record: ["r0"], handed={first: handed}
            ),
        )

    (record, deps), seen = load(handed)
    assert len(seen) == 1, seen
    assert record["id"] == second and "_dep_key0" not in record
    assert deps == {"r0": handed if kind == "postgresql" else as_read}
    if kind == "postgresql":
        # A record handed on that the database does not hold (a later
        # write, a finish lost in a crash): the dependency is read as it
        # is, in a statement of its own.
        (record, deps), seen = load(dict(handed, atomic_key=0, status="X"))
        assert deps["r0"]["status"] == "COMPLETE" and len(seen) == 2
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == first)
            .values(converged_traversal="other")
        )
    # Converged in another traversal: not a dependency of this one.
    assert load(handed)[0][1] == {}
