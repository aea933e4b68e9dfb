"""service.epoch and resource.lock_epoch: fenced record locks

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("service", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "epoch", sa.Integer(), nullable=False, server_default="1"
            )
        )
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("lock_epoch", sa.Integer(), nullable=True)
        )


def downgrade():
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.drop_column("lock_epoch")
    with op.batch_alter_table("service", schema=None) as batch_op:
        batch_op.drop_column("epoch")
