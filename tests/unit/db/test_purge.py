"""Trimming record history and events (db.purge) on an SQLite database."""

import uuid

import pytest
import sqlalchemy as sa

from heat_lite.db import models, purge


@pytest.fixture
def conn():
    engine = sa.create_engine("sqlite://")
    models.BASE.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(
            models.RawTemplate.__table__.insert().values(
                id=1, stack_id="s", template="{}", environment="{}", files="{}"
            )
        )
        connection.execute(
            models.Stack.__table__.insert().values(
                id="s",
                name="s",
                tenant="t",
                raw_template_id=1,
                action="UPDATE",
                status="COMPLETE",
                current_traversal="x",
            )
        )
        yield connection
    engine.dispose()


def _record(conn, name, version, role, action="DELETE"):
    conn.execute(
        models.Resource.__table__.insert().values(
            uuid=str(uuid.uuid4()),
            stack_id="s",
            name=name,
            version=version,
            role=role,
            type="T",
            action=action,
            status="COMPLETE",
            template_id=1,
        )
    )


def _versions(conn):
    rows = conn.execute(
        sa.text(
            "SELECT name, version, role FROM resource ORDER BY name, version"
        )
    )
    return [tuple(r) for r in rows]


def test_deleted_records_become_history_and_the_oldest_go(conn):
    for version in (1, 2, 3, 4):
        _record(conn, "a", version, "replaced")
    _record(conn, "a", 5, "current", action="UPDATE")
    _record(conn, "b", 1, "pending-delete")
    assert purge.records_to_history(conn, "s") == 5
    purge.history_trim(conn, "s", keep=3)
    assert _versions(conn) == [
        ("a", 3, "history"),
        ("a", 4, "history"),
        ("a", 5, "current"),
        ("b", 1, "history"),
    ]


def test_a_live_record_is_never_trimmed(conn):
    _record(conn, "a", 1, "pending-delete", action="CREATE")
    _record(conn, "a", 2, "current", action="CREATE")
    assert purge.records_to_history(conn, "s") == 0
    assert purge.history_trim(conn, "s", keep=1) == 0
    assert len(_versions(conn)) == 2


def _events(conn, count):
    conn.execute(
        models.Event.__table__.insert(),
        [
            {
                "uuid": str(uuid.uuid4()),
                "stack_id": "s",
                "resource_name": str(i),
            }
            for i in range(count)
        ],
    )


@pytest.mark.parametrize(
    "count,deleted", [(40, 0), (41, 10), (50, 10), (51, 20), (5, 0)]
)
def test_events_go_in_batches(conn, count, deleted):
    _events(conn, count)
    assert purge.events_trim(conn, "s", count, keep=40, batch=10) == deleted
    names = [
        r[0]
        for r in conn.execute(
            sa.text("SELECT resource_name FROM event ORDER BY id")
        )
    ]
    assert names == [str(i) for i in range(deleted, count)]


def test_zero_keeps_every_event(conn):
    _events(conn, 30)
    assert purge.events_trim(conn, "s", 30, keep=0, batch=10) == 0
