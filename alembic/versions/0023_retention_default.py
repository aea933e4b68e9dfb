"""retention_default: a project's default image retention (issue 30
item 2, doc/specs/image_retention.md)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 00:20:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0023"
revision = REVISION
down_revision = "0022"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade():
    op.create_table(
        "retention_default",
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("keep_last", sa.Integer(), nullable=True),
        sa.Column("grace", sa.Integer(), nullable=True),
        sa.Column("mode", sa.String(16), nullable=True),
        sa.Column("updated_at", DateTime, nullable=False),
        sa.PrimaryKeyConstraint("tenant"),
    )


def downgrade():
    op.drop_table("retention_default")
