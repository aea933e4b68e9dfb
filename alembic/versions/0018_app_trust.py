"""app.trust_id: the Keystone trust an app's builds act through

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 09:00:00
"""

import sqlalchemy as sa
from alembic import op

# The one place this revision's id is written (renumbered at merge).
REVISION = "0018"
revision = REVISION
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("app", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trust_id", sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table("app", schema=None) as batch_op:
        batch_op.drop_column("trust_id")
