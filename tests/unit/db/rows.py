"""Rows the db-level tests write and read directly (Core), and what
statements a call sends."""

import datetime
import uuid

import sqlalchemy as sa

from heat_lite.db import events as db_events
from heat_lite.db import models, session
from heat_lite.db import services as db_services

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
EVENT = models.Event.__table__
TEMPLATE = models.RawTemplate.__table__


def stack():
    """A stack in traversal ``trav`` with record ``r0``: (stack id,
    record id)."""
    stack_id = str(uuid.uuid4())
    with session.transaction() as conn:
        template = conn.execute(
            TEMPLATE.insert().values(
                stack_id=stack_id, template="{}", environment="{}", files="{}"
            )
        ).inserted_primary_key[0]
        conn.execute(
            STACK.insert().values(
                id=stack_id,
                name="s",
                tenant="t",
                raw_template_id=template,
                action="CREATE",
                status="IN_PROGRESS",
                current_traversal="trav",
            )
        )
        first = record(
            conn,
            stack_id,
            template,
            "r0",
            converged_traversal="trav",
            created_at=datetime.datetime(2026, 1, 2, 3, 4, 5),
        )
    return stack_id, first


def record(conn, stack_id, template, name, **values):
    return conn.execute(
        RESOURCE.insert().values(
            uuid=str(uuid.uuid4()),
            stack_id=stack_id,
            name=name,
            type="T",
            action="INIT",
            status="COMPLETE",
            template_id=template,
            **values,
        )
    ).inserted_primary_key[0]


def event(stack_id, **values):
    return dict(
        db_events.event_values(
            stack_id, "r0", "", "CREATE", "COMPLETE", "x", "T"
        ),
        **values,
    )


def events(stack_id):
    with session.transaction(writer=False) as conn:
        return conn.execute(
            sa.select(EVENT.c.uuid, EVENT.c.created_at).where(
                EVENT.c.stack_id == stack_id
            )
        ).all()


def second_record(stack_id, template):
    with session.transaction() as conn:
        return record(conn, stack_id, template, "r1")


def statements_of(engine, call):
    """(call(), the statements it sent but BEGIN and PREPARE)."""
    seen = []

    def count(conn, cursor, statement, *args):
        if statement != "BEGIN" and not statement.startswith("PREPARE "):
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        return call(), seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)


def service():
    """A live engine life: (engine_id, epoch)."""
    engine_id = str(uuid.uuid4())
    row = db_services.service_create(
        {
            "engine_id": engine_id,
            "host": "h",
            "hostname": "h",
            "binary": "heat-lite-engine",
            "topic": "engine",
            "pid": 1,
            "report_interval": 1.0,
        }
    )
    return engine_id, row["epoch"]
