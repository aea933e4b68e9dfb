"""The signals a record keeps (``db.signals``): one row each, on SQLite,
PostgreSQL and MariaDB (issue 26: a handle's signals were one document
rewritten whole at every signal, with no cap)."""

import json

import pytest
import sqlalchemy as sa

from heat_lite import conf
from heat_lite.db import api as db_api
from heat_lite.db import models, purge, session
from heat_lite.db import signals as db_signals
from tests.unit.db import rows

CONF = conf.CONF
SIGNAL = models.ResourceSignal.__table__
RESOURCE = models.Resource.__table__
OK = {"status": "SUCCESS", "reason": "fine", "data": None}


def _builder(stack_id, details):
    """``build`` as the engine gives it: Heat's default id ``count + 1``."""

    def build(count):
        key = details.get("id", str(count + 1))
        entry = dict(OK, **{k: v for k, v in details.items() if k != "id"})
        event = db_api.event_values(
            stack_id, "r0", "", "SIGNAL", "COMPLETE", "signal", "T"
        )
        return key, entry, event

    return build


def _keep(stack_id, record_id, limit=10, **details):
    return db_signals.signal_keep(
        record_id, _builder(stack_id, details), limit
    )


@pytest.fixture
def handle(database):
    """(stack id, record id) of a handle whose data keeps the map."""
    stack_id, record_id = rows.stack()
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id)
            .values(rsrc_data=json.dumps({"signals": {}, "token": "t"}))
        )
    return stack_id, record_id


def test_signals_keep_their_order_and_a_known_id_its_place(handle):
    stack_id, record_id = handle
    assert _keep(stack_id, record_id) == db_signals.STORED
    assert _keep(stack_id, record_id, id="web", data=[1]) == db_signals.STORED
    assert _keep(stack_id, record_id, status="FAILURE") == db_signals.STORED
    assert (
        _keep(stack_id, record_id, id="web", data={"ip": "192.0.2.1"})
        == db_signals.REPLACED
    )
    kept = db_signals.resource_signals(record_id)
    assert list(kept) == ["1", "web", "3"]
    assert kept["web"] == dict(OK, data={"ip": "192.0.2.1"})
    assert kept["3"]["status"] == "FAILURE"
    # What a wait condition reads: the handle's data, signals included.
    data = db_signals.resource_data_by_name(stack_id, "r0")
    assert data == {"signals": kept, "token": "t"}
    assert db_signals.stacks_signals([stack_id]) == {record_id: kept}


def test_ids_differ_by_case_on_every_backend(handle):
    """MariaDB's default collation would make "Web" and "web" one key."""
    stack_id, record_id = handle
    _keep(stack_id, record_id, id="web")
    assert _keep(stack_id, record_id, id="Web") == db_signals.STORED
    assert _keep(stack_id, record_id, id="web ") == db_signals.STORED
    assert list(db_signals.resource_signals(record_id)) == [
        "web",
        "Web",
        "web ",
    ]


def test_storing_a_signal_neither_reads_nor_rewrites_the_others(
    handle, database
):
    stack_id, record_id = handle
    for number in range(5):
        _keep(stack_id, record_id, data="x" * 100, id="s%d" % number)
    outcome, sent = rows.statements_of(
        database[1], lambda: _keep(stack_id, record_id, id="last")
    )
    assert outcome == db_signals.STORED
    text = "\n".join(sent).lower()
    assert "rsrc_data" not in text
    assert "update resource " not in text
    # The stored signals' contents are never selected, only counted.
    assert "resource_signal.data" not in text
    assert "resource_signal.reason" not in text


def test_a_handle_keeps_at_most_limit_ids(handle):
    stack_id, record_id = handle
    for _ in range(3):
        assert _keep(stack_id, record_id, limit=3) == db_signals.STORED
    assert _keep(stack_id, record_id, limit=3) == db_signals.FULL
    assert _keep(stack_id, record_id, limit=3, id="new") == db_signals.FULL
    # A known id is still replaced.
    assert (
        _keep(stack_id, record_id, limit=3, id="2", reason="again")
        == db_signals.REPLACED
    )
    kept = db_signals.resource_signals(record_id)
    assert list(kept) == ["1", "2", "3"]
    assert kept["2"]["reason"] == "again"
    # Nothing of a refused signal was written, not even its event.
    assert len(rows.events(stack_id)) == 4


def test_a_locked_or_gone_record_is_busy(handle):
    stack_id, record_id = handle
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id)
            .values(engine_id="e")
        )
    assert _keep(stack_id, record_id) == db_signals.BUSY
    assert _keep(stack_id, record_id + 1000) == db_signals.BUSY
    assert db_signals.resource_signals(record_id) == {}


def test_signals_between_operations_keep_the_event_table_bounded(handle):
    stack_id, record_id = handle
    CONF.set_override("max_events_per_stack", 5)
    CONF.set_override("event_purge_batch_size", 2)
    try:
        for _ in range(12):
            _keep(stack_id, record_id, id="same")
    finally:
        CONF.clear_override("max_events_per_stack")
        CONF.clear_override("event_purge_batch_size")
    assert 3 <= len(rows.events(stack_id)) <= 5


def _signal_rows(stack_id):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(sa.func.count())
            .select_from(SIGNAL)
            .where(SIGNAL.c.stack_id == stack_id)
        ).scalar()


def test_signals_go_when_their_record_becomes_history(handle):
    stack_id, record_id = handle
    _keep(stack_id, record_id)
    other = rows.second_record(stack_id, _template(record_id))
    _keep(stack_id, other)
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id)
            .values(action="DELETE", status="COMPLETE")
        )
        purge.records_to_history(conn, stack_id)
    assert db_signals.resource_signals(record_id) == {}
    assert list(db_signals.resource_signals(other)) == ["1"]
    # Whatever raced the stack's delete goes with the stack.
    with session.transaction() as conn:
        conn.execute(
            models.Stack.__table__.update()
            .where(models.Stack.__table__.c.id == stack_id)
            .values(deleted_at=models.utcnow())
        )
    purge.purge_deleted(models.utcnow())
    assert _signal_rows(stack_id) == 0


def _template(record_id):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(RESOURCE.c.template_id).where(RESOURCE.c.id == record_id)
        ).scalar()
