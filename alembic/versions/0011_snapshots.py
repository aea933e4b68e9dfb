"""snapshot table

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 16:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade():
    op.create_table(
        "snapshot",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("traversal", sa.String(length=36), nullable=True),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column(
            "data",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=True,
        ),
        sa.Column("created_at", _DATETIME, nullable=False),
        sa.Column("updated_at", _DATETIME, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_snapshot_stack", "snapshot", ["stack_id", "created_at"]
    )


def downgrade():
    op.drop_index("ix_snapshot_stack", table_name="snapshot")
    op.drop_table("snapshot")
