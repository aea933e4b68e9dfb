"""A cleanup finish that takes the successor it makes ready
(``db_finish.resource_finish`` with a taker), on SQLite, PostgreSQL and
MariaDB. On MariaDB, with one successor, the finish reads it first and
locks it in its own UPDATE (``dialects.mysql.finish_and_lock_mysql``);
every other case must come out as the separate read and lock give it.
"""

import pytest
import sqlalchemy as sa

from heat_lite.db import finish as db_finish
from heat_lite.db import models, session
from heat_lite.db import records as db_records
from heat_lite.db import sync_points as db_sync_points
from tests.unit.db import rows

RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
LOCK = {"action": "DELETE", "status": "IN_PROGRESS", "status_reason": "x"}


class _Taker:
    """What ``db.finish`` asks of ``worker.prelock.Taker``, with
    what it answers set by the test (``wants`` may act as well)."""

    values = LOCK
    limit = 4

    def __init__(self, owner, wants=lambda record: True):
        self.owner = owner
        self._wants = wants
        self.asked = 0
        self.result = []

    def wants(self, record):
        self.asked += 1
        return self._wants(record)


def _chain(remaining):
    """Records r0 and r1 of a stack, r1 waiting in phase ``cleanup`` of
    traversal ``trav`` for ``remaining`` inputs, r0 one of them."""
    stack_id, first = rows.stack()
    template = db_records.resource_load(first)["template_id"]
    second = rows.second_record(stack_id, template)
    with session.transaction() as conn:
        db_sync_points.insert_sync_points(
            conn, stack_id, "trav", {(second, "cleanup"): remaining}
        )
    return stack_id, first, second


def _finish(stack_id, first, second, taker):
    return db_finish.resource_finish(
        first,
        0,
        None,
        {"status": "COMPLETE", "action": "DELETE"},
        [rows.event(stack_id)],
        "trav",
        "cleanup",
        [second],
        taker=taker,
    )


def _remaining(entity):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(SYNC.c.remaining).where(
                SYNC.c.traversal_id == "trav", SYNC.c.entity_id == entity
            )
        ).scalar()


def _finished_and_counted(stack_id, first, second):
    """The finish's own writes happened: the record, its event, the
    count."""
    record = db_records.resource_load(first)
    assert (record["action"], record["status"]) == ("DELETE", "COMPLETE")
    assert len(rows.events(stack_id)) == 1
    return _remaining(second)


def _locked_as_stored(taken, owner):
    stored = db_records.resource_load(taken["id"])
    lock = ("engine_id", "lock_epoch", "lock_traversal", "atomic_key")
    assert {k: taken[k] for k in lock} == {k: stored[k] for k in lock}
    assert (stored["engine_id"], stored["lock_epoch"]) == owner
    assert {k: stored[k] for k in LOCK} == LOCK
    return stored


def test_the_finish_of_the_last_input_locks_the_successor(database):
    kind, engine = database
    stack_id, first, second = _chain(1)
    owner = rows.service()
    taker = _Taker(owner)
    fired, seen = rows.statements_of(
        engine, lambda: _finish(stack_id, first, second, taker)
    )
    assert fired == ([(second, "cleanup")], False)
    assert _finished_and_counted(stack_id, first, second) == 0
    ((taken, locked),) = taker.result
    assert locked and taken["id"] == second
    stored = _locked_as_stored(taken, owner)
    assert (stored["atomic_key"], stored["lock_traversal"]) == (1, "trav")
    assert taken["stack_id"] == stack_id and "stack_traversal" in taken
    if kind == "mysql":
        # The successor's read, the event, one UPDATE of the record, the
        # count and the successor's lock.
        assert len(seen) == 3, seen


def test_a_successor_still_waiting_is_not_taken(database):
    stack_id, first, second = _chain(2)
    taker = _Taker(rows.service())
    assert _finish(stack_id, first, second, taker) == ([], False)
    assert _finished_and_counted(stack_id, first, second) == 1
    assert taker.result == [] and taker.asked == 0
    assert db_records.resource_load(second)["engine_id"] is None


def test_a_successor_the_taker_leaves_is_read_not_locked(database):
    stack_id, first, second = _chain(1)
    taker = _Taker(rows.service(), wants=lambda record: False)
    assert _finish(stack_id, first, second, taker)[0] == [(second, "cleanup")]
    assert _finished_and_counted(stack_id, first, second) == 0
    ((taken, locked),) = taker.result
    assert not locked and taken["id"] == second
    assert taken["atomic_key"] == 0 and taken["stack_traversal"] == "trav"
    assert db_records.resource_load(second)["engine_id"] is None


def test_a_successor_written_after_the_read_is_not_locked_blind(database):
    """A write of the successor between the finish's read of it and its
    lock (here: in the taker's question) makes the lock miss its
    atomic_key: the finish still completes, and what the taker is told
    is what the database holds. MariaDB, whose lock was part of the
    finish's UPDATE, reads the successor again and locks it as it now
    is; the others' separate lock just misses."""
    kind, engine = database
    if kind == "sqlite":
        pytest.skip("SQLite's finish holds the database: no write between")
    stack_id, first, second = _chain(1)
    owner = rows.service()

    def written_first(record):
        if record["atomic_key"] == 0:
            with engine.begin() as conn:
                conn.execute(
                    RESOURCE.update()
                    .where(RESOURCE.c.id == second)
                    .values(atomic_key=RESOURCE.c.atomic_key + 1)
                )
        return True

    taker = _Taker(owner, wants=written_first)
    assert _finish(stack_id, first, second, taker)[0] == [(second, "cleanup")]
    assert _finished_and_counted(stack_id, first, second) == 0
    ((taken, locked),) = taker.result
    if kind == "mysql":
        assert locked and taker.asked == 2
        assert _locked_as_stored(taken, owner)["atomic_key"] == 2
    else:
        assert not locked and taker.asked == 1
        stored = db_records.resource_load(second)
        assert (stored["atomic_key"], stored["engine_id"]) == (1, None)


def test_a_successor_someone_holds_is_not_locked(database):
    stack_id, first, second = _chain(1)
    other, epoch = rows.service()
    with session.transaction() as conn:
        conn.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == second)
            .values(engine_id=other, lock_epoch=epoch)
        )
    taker = _Taker(rows.service())
    assert _finish(stack_id, first, second, taker)[0] == [(second, "cleanup")]
    assert _finished_and_counted(stack_id, first, second) == 0
    ((taken, locked),) = taker.result
    assert not locked and taken["engine_id"] == other
    assert db_records.resource_load(second)["atomic_key"] == 0
