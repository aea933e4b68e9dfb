"""app: a git source, a builder and a template deployed per branch
(issue 29.1, doc/specs/apps.md)

``live_name`` is the name while the app is live, NULL once deleted: the
unique key (tenant, live_name) keeps live names unique per project in
the database itself. ``version`` makes every update conditional.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 03:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0015"
revision = REVISION
down_revision = "0014"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")
# Compared byte for byte: MySQL's collations fold case (models.ExactKey).
ExactKey = sa.String(255).with_variant(mysql.VARBINARY(1020), "mysql")


def upgrade():
    op.create_table(
        "app",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("live_name", ExactKey, nullable=True),
        sa.Column("username", sa.String(255), nullable=True),
        sa.Column("spec", LongText, nullable=False),
        sa.Column("webhook_secret", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("updated_at", DateTime, nullable=True),
        sa.Column("deleted_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "tenant", "live_name", name="uniq_app0tenant0live_name"
        ),
    )
    op.create_index("ix_app_tenant_created", "app", ["tenant", "created_at"])
    op.create_index("ix_app_deleted_at", "app", ["deleted_at"])


def downgrade():
    op.drop_table("app")
