"""Migration 0013 moves the signals a handle kept in its data into rows
of their own (``resource_signal``), and back on a downgrade."""

import json

import pytest
import sqlalchemy as sa

from harness import databases
from heat_lite.db import migration, models, session
from heat_lite.db import signals as db_signals

LEGACY = {
    "1": {"status": "SUCCESS", "reason": "Signal 1 received", "data": None},
    "web": {"status": "FAILURE", "reason": "disk", "data": {"ip": "x"}},
}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mysql"])
def test_migration_moves_the_signals_out_of_the_data(kind, tmp_path):
    with databases.private_database(kind, tmp_path):
        engine = session.get_engine()
        migration.downgrade("0012", engine=engine)
        with engine.begin() as conn:
            stack_id, record_id = _legacy_handle(conn)
        migration.upgrade("head", engine=engine)
        assert db_signals.resource_signals(record_id) == LEGACY
        assert db_signals.resource_data_by_name(stack_id, "h") == {
            "signals": LEGACY,
            "token": "t",
        }
        migration.downgrade("0012", engine=engine)
        with engine.connect() as conn:
            stored = conn.execute(
                sa.text("SELECT rsrc_data FROM resource WHERE id = :i"),
                {"i": record_id},
            ).scalar()
        assert json.loads(stored)["signals"] == LEGACY
        migration.upgrade("head", engine=engine)


def _legacy_handle(conn):
    """A stack whose handle ``h`` keeps signals in its data (0012)."""
    conn.execute(
        sa.text(
            "INSERT INTO raw_template (id, template, environment, files, "
            "created_at) VALUES (1, '{}', '{}', '{}', :now)"
        ),
        {"now": models.utcnow()},
    )
    conn.execute(
        sa.text(
            "INSERT INTO stack (id, name, tenant, raw_template_id, action, "
            "status, current_traversal, nested_depth, disable_rollback, "
            "created_at, action_started_at) VALUES ('s', 's', 't', 1, "
            "'CREATE', 'COMPLETE', 'x', 0, :true, :now, :now)"
        ),
        {"now": models.utcnow(), "true": True},
    )
    data = json.dumps({"signals": LEGACY, "token": "t"})
    conn.execute(
        sa.text(
            "INSERT INTO resource (uuid, stack_id, name, version, role, "
            "type, action, status, template_id, rsrc_data, atomic_key, "
            "created_at) VALUES ('u', 's', 'h', 1, 'current', "
            "'OS::Heat::WaitConditionHandle', 'CREATE', 'COMPLETE', 1, "
            ":data, 0, :now)"
        ),
        {"data": data, "now": models.utcnow()},
    )
    record_id = conn.execute(sa.text("SELECT id FROM resource")).scalar()
    return "s", record_id
