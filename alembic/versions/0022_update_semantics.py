"""update_semantics: a stack's update semantics and its traversal history
and queue (issue 32 item 4, doc/specs/update_semantics.md)

Revision ID: 0023
Revises: 0020
Create Date: 2026-12-04 23:20:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0022"
revision = REVISION
down_revision = "0021"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


def upgrade():
    op.add_column(
        "stack",
        sa.Column("update_semantics", sa.String(16), nullable=True),
    )
    op.create_table(
        "traversal_log",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("requested_by", sa.String(255), nullable=True),
        sa.Column("superseded_by", sa.String(36), nullable=True),
        sa.Column("request", LongText, nullable=True),
        sa.Column("caller_token", sa.Text(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("started_at", DateTime, nullable=True),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("id"),
    )
    op.create_index(
        "ix_traversal_log_stack_state",
        "traversal_log",
        ["stack_id", "state"],
    )


def downgrade():
    op.drop_index("ix_traversal_log_stack_state", table_name="traversal_log")
    op.drop_table("traversal_log")
    with op.batch_alter_table("stack") as batch_op:
        batch_op.drop_column("update_semantics")
