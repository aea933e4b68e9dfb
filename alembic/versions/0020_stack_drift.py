"""stack_drift: the last property-level drift detection of each stack
(issue 32 item 1)

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04 20:30:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0020"
revision = REVISION
down_revision = "0019"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


def upgrade():
    op.create_table(
        "stack_drift",
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("detection", sa.String(36), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("report", LongText, nullable=True),
        sa.Column("started_at", DateTime, nullable=False),
        sa.Column("detected_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("stack_id"),
    )


def downgrade():
    op.drop_table("stack_drift")
