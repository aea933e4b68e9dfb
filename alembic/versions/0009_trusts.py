"""stack.trust_id: the Keystone trust a stack's resources act through

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("stack", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trust_id", sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table("stack", schema=None) as batch_op:
        batch_op.drop_column("trust_id")
