"""verification: the checks of verified updates

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:45:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade():
    op.create_table(
        "verification",
        sa.Column("traversal_id", sa.String(36), nullable=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("started_at", DateTime, nullable=True),
        sa.Column("verdict", sa.Text(), nullable=True),
        sa.Column("result", sa.String(16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("traversal_id"),
    )
    op.create_index("ix_verification_stack_id", "verification", ["stack_id"])


def downgrade():
    op.drop_index("ix_verification_stack_id", table_name="verification")
    op.drop_table("verification")
