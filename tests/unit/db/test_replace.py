"""``db_records.resource_replace``: the new version's INSERT ... SELECT carries
the stack's traversal guard, read under a shared lock of the stack row,
on SQLite, PostgreSQL and MariaDB.

What the guard must keep (``../shared/design/convergence.md``): a worker
of a superseded traversal, or of a deleted stack, creates no version; a
traversal that starts while a replacement is open waits for it (and so
plans with the new version); replacements of one stack do not wait for
each other.
"""

import threading
import uuid

import pytest
import sqlalchemy as sa

from harness import databases, polling
from heat_lite.db import models, session, statements
from heat_lite.db import records as db_records
from tests.unit.db import rows

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__


def _new_values(stack_id, old):
    return {
        "uuid": str(uuid.uuid4()),
        "stack_id": stack_id,
        "name": old["name"],
        "role": "current",
        "type": "T",
        "action": "INIT",
        "status": "COMPLETE",
        "status_reason": "",
        "template_id": old["template_id"],
        "atomic_key": 0,
    }


def _replace(stack_id, record_id, traversal="trav", lock=None):
    old = db_records.resource_load(record_id)
    return db_records.resource_replace(
        stack_id, traversal, old, None, _new_values(stack_id, old), lock=lock
    )


def _versions(stack_id):
    with session.transaction(writer=False) as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.select(
                    RESOURCE.c.name,
                    RESOURCE.c.version,
                    RESOURCE.c.role,
                    RESOURCE.c.replaced_by,
                )
                .where(RESOURCE.c.stack_id == stack_id)
                .order_by(RESOURCE.c.name, RESOURCE.c.version)
            )
        ]


def _set_stack(stack_id, **values):
    with session.transaction() as conn:
        conn.execute(
            STACK.update().where(STACK.c.id == stack_id).values(**values)
        )


def test_a_replacement_is_a_new_version_and_the_old_one_replaced(database):
    stack_id, first = rows.stack()
    new = _replace(stack_id, first)
    assert (new["name"], new["version"], new["role"]) == ("r0", 2, "current")
    assert new["replaces"] == first
    assert _versions(stack_id) == [
        ("r0", 1, "replaced", new["id"]),
        ("r0", 2, "current", None),
    ]


@pytest.mark.parametrize(
    "change",
    [{"current_traversal": "next"}, {"deleted_at": models.utcnow()}],
    ids=["superseded", "deleted"],
)
def test_no_version_for_a_superseded_traversal_or_a_deleted_stack(
    database, change
):
    stack_id, first = rows.stack()
    _set_stack(stack_id, **change)
    assert _replace(stack_id, first) is None
    assert _versions(stack_id) == [("r0", 1, "current", None)]
    assert db_records.resource_load(first)["atomic_key"] == 0


def test_no_version_locked_by_an_engine_life_that_is_not_live(database):
    stack_id, first = rows.stack()
    engine_id, epoch = rows.service()
    assert _replace(stack_id, first, lock=(engine_id, epoch + 1)) is None
    assert _versions(stack_id) == [("r0", 1, "current", None)]
    new = _replace(stack_id, first, lock=(engine_id, epoch))
    assert (new["engine_id"], new["lock_epoch"], new["atomic_key"]) == (
        engine_id,
        epoch,
        1,
    )


def _lock_timeout(conn, kind):
    """Make ``conn`` give up a lock wait within about a second."""
    if kind == "postgresql":
        conn.exec_driver_sql("SET lock_timeout = '300ms'")
    else:
        conn.exec_driver_sql("SET SESSION innodb_lock_wait_timeout = 1")
    conn.commit()


def _open_replacement(conn, stack_id, name, template):
    """The INSERT ... SELECT of a new version of ``name``, its
    transaction left open on ``conn``: the shared lock it holds."""
    values = dict(
        _new_values(stack_id, {"name": name, "template_id": template}),
        replaces=None,
        created_at=models.utcnow(),
    )
    result = conn.execute(
        statements.version_insert(values, False, False),
        dict(values, _stack=stack_id, _traversal="trav", _name=name),
    )
    assert result.rowcount == 1


def _timed_out(exc):
    text = str(exc)
    return "lock timeout" in text or "Lock wait timeout" in text


def test_a_traversal_start_waits_for_an_open_replacement(database):
    """The stack row is read FOR SHARE (MariaDB: LOCK IN SHARE MODE): the
    UPDATE that starts a traversal cannot pass a replacement that has
    not committed, and a second replacement of the stack does not wait
    for the first."""
    kind, engine = database
    if kind == "sqlite":
        pytest.skip("SQLite serialises its writers")
    stack_id, first = rows.stack()
    template = db_records.resource_load(first)["template_id"]
    with session.transaction() as conn:
        rows.record(conn, stack_id, template, "r1")
    holder = engine.connect()
    other = engine.connect()
    try:
        holder.begin()
        _open_replacement(holder, stack_id, "r0", template)
        _lock_timeout(other, kind)
        with other.begin():
            _open_replacement(other, stack_id, "r1", template)
        with pytest.raises(Exception) as waited:
            with other.begin():
                other.execute(
                    STACK.update()
                    .where(STACK.c.id == stack_id)
                    .values(current_traversal="next")
                )
        assert _timed_out(waited.value), waited.value
        holder.commit()
        with other.begin():
            other.execute(
                STACK.update()
                .where(STACK.c.id == stack_id)
                .values(current_traversal="next")
            )
    finally:
        holder.close()
        other.close()
    assert [(n, v) for n, v, _, _ in _versions(stack_id)] == [
        ("r0", 1),
        ("r0", 2),
        ("r1", 1),
        ("r1", 2),
    ]


def test_a_replacement_racing_another_of_the_same_record_is_refused(
    database,
):
    """Two replacements of one record at once (its node run twice, by a
    re-drive) number the same version: the second waits on the unique
    version and then gets None, as when the old record changed; it does
    not fail its node."""
    kind, engine = database
    if kind == "sqlite":
        pytest.skip("SQLite serialises its writers")
    stack_id, first = rows.stack()
    template = db_records.resource_load(first)["template_id"]
    holder = engine.connect()
    outcome = []
    try:
        holder.begin()
        _open_replacement(holder, stack_id, "r0", template)
        racer = threading.Thread(
            target=lambda: outcome.append(_replace(stack_id, first))
        )
        racer.start()
        # The racer waits on the version the holder inserted (had it come
        # after the commit, it would number version 3 and succeed).
        polling.until(
            lambda: databases.lock_waits(engine, kind),
            30,
            "the racer's lock wait",
        )
        assert racer.is_alive()
        holder.commit()
        racer.join(30)
    finally:
        holder.close()
    assert outcome == [None]
    assert [(n, v, role) for n, v, role, _ in _versions(stack_id)] == [
        ("r0", 1, "current"),
        ("r0", 2, "current"),
    ]
