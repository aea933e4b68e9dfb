"""resource hook breakpoints

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 12:05:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("hook", sa.String(length=64), nullable=True)
        )


def downgrade():
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.drop_column("hook")
