"""traversal.caller_token: the encrypted token of the operation's caller

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 15:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("traversal", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("caller_token", sa.Text(), nullable=True)
        )


def downgrade():
    with op.batch_alter_table("traversal", schema=None) as batch_op:
        batch_op.drop_column("caller_token")
