"""resource.properties_before: what an in-place update started from

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 20:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column(
        "resource",
        sa.Column(
            "properties_before",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=True,
        ),
    )


def downgrade():
    with op.batch_alter_table("resource") as batch:
        batch.drop_column("properties_before")
