"""sync_point.redrives, redriven_at: capped, backed-off re-drives of a node

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 09:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("sync_point", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "redrives", sa.Integer(), nullable=False, server_default="0"
            )
        )
        batch_op.add_column(
            sa.Column(
                "redriven_at",
                sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
                nullable=True,
            )
        )


def downgrade():
    with op.batch_alter_table("sync_point", schema=None) as batch_op:
        batch_op.drop_column("redriven_at")
        batch_op.drop_column("redrives")
