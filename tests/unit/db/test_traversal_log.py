"""The traversal log (``db.traversal_log``) on SQLite, PostgreSQL and
MariaDB: a queued traversal starts at most once, the queue's bound, the
history trimmed to the newest ``max_traversal_history`` (MySQL cannot
LIMIT a subquery of the table it deletes from), and ``purge_deleted``."""

import datetime
import threading
import uuid

import pytest
import sqlalchemy as sa

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import models, purge, session
from heat_lite.db import traversal_log as db_log
from tests.unit.db import rows

CONF = conf.CONF
STACK = models.Stack.__table__


def _id():
    return str(uuid.uuid4())


def _start(stack_id, traversal, **log):
    with session.transaction() as conn:
        db_log.log_start(
            conn, stack_id, traversal, dict({"action": "UPDATE"}, **log)
        )


def _finish(stack_id, traversal, state="COMPLETE"):
    with session.transaction() as conn:
        db_log.log_finish(conn, stack_id, traversal, state, "done")


def _states(stack_id):
    return [(r["id"], r["state"]) for r in db_log.log_list(stack_id)][::-1]


def test_a_queued_traversal_starts_once_and_supersedes(database):
    stack_id, _ = rows.stack()
    t1, t2 = _id(), _id()
    _start(stack_id, t1)
    db_log.queue_add(stack_id, t2, "alice", {"x": 1}, "token", 5)
    assert db_log.queue_next(stack_id)["request"] == {"x": 1}
    _start(stack_id, t2, queued=True, previous=t1)
    with pytest.raises(exception.ConcurrentTransaction):
        _start(stack_id, t2, queued=True)
    assert _states(stack_id) == [(t1, "SUPERSEDED"), (t2, "RUNNING")]
    row = db_log.log_get(stack_id, t1)
    assert row["superseded_by"] == t2 and row["finished_at"] is not None
    assert db_log.queue_next(stack_id) is None


def test_the_queue_is_bounded_and_a_queued_one_cancellable(database):
    stack_id, _ = rows.stack()
    run, q0, q1 = _id(), _id(), _id()
    _start(stack_id, run)
    for n, q in enumerate((q0, q1)):
        assert db_log.queue_add(stack_id, q, "a", {}, None, 2) == n + 1
    with pytest.raises(exception.UpdateQueueFull):
        db_log.queue_add(stack_id, _id(), "a", {}, None, 2)
    assert db_log.queue_cancel(stack_id, q0, "no")
    assert not db_log.queue_cancel(stack_id, q0, "again")
    assert not db_log.queue_cancel(stack_id, run, "running")
    assert stack_id not in db_log.queued_idle_stacks()  # it runs
    with session.transaction() as conn:
        conn.execute(
            STACK.update()
            .where(STACK.c.id == stack_id)
            .values(status="COMPLETE")
        )
    assert stack_id in db_log.queued_idle_stacks()
    with session.transaction() as conn:
        db_log.log_finish(conn, stack_id, run, "COMPLETE", "", delete=True)
    assert _states(stack_id)[-1] == (q1, "CANCELLED")


def test_history_keeps_the_newest_finished_and_every_live_one(database):
    CONF.set_override("max_traversal_history", 3, group="engine")
    try:
        stack_id, _ = rows.stack()
        ids = [_id() for _ in range(8)]
        db_log.queue_add(stack_id, ids[0], "a", {}, None, 5)
        for t in ids[1:7]:
            _start(stack_id, t)
            _finish(stack_id, t)
        _start(stack_id, ids[7])
        _finish(stack_id, _id())  # trims again, keeps the same
        assert [t for t, _ in _states(stack_id)] == [ids[0]] + ids[4:]
    finally:
        CONF.clear_override("max_traversal_history", group="engine")


def test_purge_deleted_takes_the_log_of_purged_and_old_history(database):
    kept, _ = rows.stack()
    gone, _ = rows.stack()
    ids = {s: (_id(), _id()) for s in (kept, gone)}
    for stack_id, (old, new) in ids.items():
        _start(stack_id, old)
        _finish(stack_id, old)
        _start(stack_id, new)
    long_ago = models.utcnow() - datetime.timedelta(days=30)
    with session.transaction() as conn:
        conn.execute(
            models.TraversalLog.__table__.update()
            .where(models.TraversalLog.__table__.c.state == "COMPLETE")
            .values(finished_at=long_ago)
        )
        conn.execute(
            STACK.update()
            .where(STACK.c.id == gone)
            .values(deleted_at=long_ago, live_name=None)
        )
    counts = purge.purge_deleted(models.utcnow() - datetime.timedelta(days=1))
    assert counts["traversals"] >= 3
    assert _states(gone) == []
    assert _states(kept) == [(ids[kept][1], "RUNNING")]


def test_stack_semantics_leaving_queue_cancels_what_waits(database):
    stack_id, _ = rows.stack()
    db_log.queue_add(stack_id, _id(), "a", {}, None, 5)
    assert db_log.stack_set_semantics(stack_id, "queue")
    assert db_log.stack_set_semantics(stack_id, None, "changed")
    assert [s for _, s in _states(stack_id)] == ["CANCELLED"]
    with session.transaction(writer=False) as conn:
        stored = conn.execute(
            sa.select(STACK.c.update_semantics).where(STACK.c.id == stack_id)
        ).scalar()
    assert stored is None


def test_concurrent_submissions_never_pass_the_bound(database):
    """Eight threads queue at once behind a bound of three: exactly three
    are queued, the others refused (each submission takes its turn on
    the stack's row)."""
    stack_id, _ = rows.stack()
    outcomes = []

    def submit():
        try:
            db_log.queue_add(stack_id, _id(), "a", {}, None, 3)
            outcomes.append("queued")
        except exception.UpdateQueueFull:
            outcomes.append("full")

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["full"] * 5 + ["queued"] * 3
    assert [s for _, s in _states(stack_id)] == ["QUEUED"] * 3
