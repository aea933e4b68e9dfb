"""promotions: a tested stack's template made another stack's (issue 16)

A promotion copies a source stack's last COMPLETE template, files and
environment (its ``snapshot``, kept in the row: the source's template row
may be purged after the source's next update) onto a target stack, with
an overlay, behind a verified update (the gate). It runs as a taskflow
flow owned like a rollout (``engine_id`` + ``epoch``).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 16:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


def upgrade():
    op.create_table(
        "promotion",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("target_tenant", sa.String(64), nullable=False),
        sa.Column("username", sa.String(255), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("source_stack_id", sa.String(36), nullable=False),
        sa.Column("source_stack_name", sa.String(255), nullable=False),
        sa.Column("source_template_id", sa.Integer(), nullable=False),
        sa.Column("source_template_sha256", sa.String(64), nullable=False),
        sa.Column("target_stack_id", sa.String(36), nullable=False),
        sa.Column("target_stack_name", sa.String(255), nullable=False),
        sa.Column("created_target", sa.Boolean(), nullable=False),
        sa.Column("spec", LongText, nullable=False),
        sa.Column("previous", LongText, nullable=True),
        sa.Column("caller_token", sa.Text(), nullable=True),
        sa.Column("traversal_id", sa.String(36), nullable=True),
        sa.Column("marked_at", DateTime, nullable=True),
        sa.Column("revert_traversal_id", sa.String(36), nullable=True),
        sa.Column("revert_marked_at", DateTime, nullable=True),
        sa.Column("rollback_requested", sa.Boolean(), nullable=False),
        sa.Column("engine_id", sa.String(36), nullable=True),
        sa.Column("epoch", sa.Integer(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("updated_at", DateTime, nullable=True),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_promotion_tenant", "promotion", ["tenant", "created_at"]
    )
    op.create_index(
        "ix_promotion_target_tenant",
        "promotion",
        ["target_tenant", "created_at"],
    )
    op.create_index(
        "ix_promotion_target_stack",
        "promotion",
        ["target_stack_id", "created_at"],
    )
    op.create_index("ix_promotion_status", "promotion", ["status"])


def downgrade():
    op.drop_table("promotion")
