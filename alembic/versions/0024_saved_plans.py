"""saved_plans: a stack's saved update plans (issue 32 item 3,
doc/specs/saved_plans.md)

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05 02:30:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0024"
revision = REVISION
down_revision = "0023"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


def upgrade():
    op.create_table(
        "stack_plan",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("existing", sa.Boolean(), nullable=False),
        sa.Column("request", LongText, nullable=False),
        sa.Column("changes", LongText, nullable=False),
        sa.Column("basis", LongText, nullable=False),
        sa.Column("traversal", sa.String(36), nullable=True),
        sa.Column("created_by", sa.String(255), nullable=True),
        sa.Column("applied_traversal", sa.String(36), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("expires_at", DateTime, nullable=False),
        sa.Column("applied_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_stack_plan_stack_id_created_at",
        "stack_plan",
        ["stack_id", "created_at"],
    )


def downgrade():
    op.drop_index("ix_stack_plan_stack_id_created_at", "stack_plan")
    op.drop_table("stack_plan")
