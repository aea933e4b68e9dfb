"""resource_signal: a handle's signals, one row each

The signals a WaitConditionHandle kept in its data (``rsrc_data``'s
``signals`` map, rewritten whole at every signal) move to rows of their
own; the handle's data keeps the key, empty. Its metadata, where Heat
shows the signals, is left as it is.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 22:40:00
"""

import datetime
import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
_LONGTEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")
# Compared byte for byte: MySQL's collations fold case and trailing
# spaces (``models.ExactKey``).
_ID = sa.String(255).with_variant(mysql.VARBINARY(1020), "mysql")
_RESOURCE = sa.table(
    "resource",
    sa.column("id", sa.Integer),
    sa.column("stack_id", sa.String),
    sa.column("rsrc_data", sa.Text),
)


def upgrade():
    signal = op.create_table(
        "resource_signal",
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("signal_id", _ID, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", _LONGTEXT, nullable=True),
        sa.Column("data", _LONGTEXT, nullable=True),
        sa.Column("created_at", _DATETIME, nullable=False),
        sa.Column("updated_at", _DATETIME, nullable=True),
        sa.PrimaryKeyConstraint("resource_id", "signal_id"),
    )
    op.create_index(
        "ix_resource_signal_stack_id", "resource_signal", ["stack_id"]
    )
    _move_signals(op.get_bind(), signal)


def _move_signals(bind, signal):
    """Each record whose data holds signals: one row per signal, the
    data's map emptied. One record's data in memory at a time."""
    ids = bind.execute(
        sa.select(_RESOURCE.c.id).where(
            _RESOURCE.c.rsrc_data.like('%"signals"%')
        )
    ).scalars()
    for record_id in list(ids):
        row = bind.execute(
            sa.select(_RESOURCE.c.stack_id, _RESOURCE.c.rsrc_data).where(
                _RESOURCE.c.id == record_id
            )
        ).first()
        data = json.loads(row.rsrc_data or "{}")
        kept = data.get("signals")
        if not isinstance(kept, dict) or not kept:
            continue
        rows = _rows(record_id, row.stack_id, kept)
        if bind.dialect.name == "mysql":
            for item in rows:
                item["signal_id"] = item["signal_id"].encode("utf-8")
        if rows:
            bind.execute(signal.insert(), rows)
        data["signals"] = {}
        bind.execute(
            _RESOURCE.update()
            .where(_RESOURCE.c.id == record_id)
            .values(rsrc_data=json.dumps(data))
        )


def _rows(record_id, stack_id, kept):
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    rows, seen = [], set()
    for position, (key, entry) in enumerate(kept.items(), start=1):
        # An id longer than the column (no limit before) keeps its first
        # 255 characters.
        key = str(key)[:255]
        if key in seen or not isinstance(entry, dict):
            continue
        seen.add(key)
        rows.append(
            {
                "resource_id": record_id,
                "signal_id": key,
                "stack_id": stack_id,
                "position": position,
                "status": str(entry.get("status") or "SUCCESS")[:16],
                "reason": entry.get("reason"),
                "data": json.dumps(entry.get("data")),
                "created_at": now,
            }
        )
    return rows


def downgrade():
    bind = op.get_bind()
    signal = sa.table(
        "resource_signal",
        *(
            sa.column(name)
            for name in ("resource_id", "signal_id", "position")
            + ("status", "reason", "data")
        ),
    )
    records = bind.execute(
        sa.select(signal.c.resource_id).distinct()
    ).scalars()
    for record_id in list(records):
        _move_back(bind, signal, record_id)
    op.drop_index("ix_resource_signal_stack_id", table_name="resource_signal")
    op.drop_table("resource_signal")


def _move_back(bind, signal, record_id):
    """The record's signals back into its data's ``signals`` map."""
    rows = bind.execute(
        sa.select(signal)
        .where(signal.c.resource_id == record_id)
        .order_by(signal.c.position)
    )
    kept = {
        _text(r.signal_id): {
            "status": r.status,
            "reason": r.reason,
            "data": json.loads(r.data) if r.data is not None else None,
        }
        for r in rows
    }
    stored = bind.execute(
        sa.select(_RESOURCE.c.rsrc_data).where(_RESOURCE.c.id == record_id)
    ).scalar()
    if stored is None and not kept:
        return
    data = json.loads(stored or "{}")
    data["signals"] = kept
    bind.execute(
        _RESOURCE.update()
        .where(_RESOURCE.c.id == record_id)
        .values(rsrc_data=json.dumps(data))
    )


def _text(key):
    return key.decode("utf-8") if isinstance(key, bytes) else key
