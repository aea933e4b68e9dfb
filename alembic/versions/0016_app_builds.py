"""app_build and app_build_log: the builds of apps and their logs
(issue 29.3, doc/specs/apps.md)

(app_id, delivery_id) is unique: a replayed webhook delivery is refused
by the database. ``lane`` (the branch while running) and ``slot`` are
NULL unless the build runs; their unique keys bound the running builds
of a branch to one and of an app to ``max_builds_per_app``.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 07:50:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0016"
revision = REVISION
down_revision = "0015"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
# Compared byte for byte: MySQL's collations fold case (models.ExactKey).
ExactKey = sa.String(255).with_variant(mysql.VARBINARY(1020), "mysql")


def upgrade():
    op.create_table(
        "app_build",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("app_id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("branch", ExactKey, nullable=False),
        sa.Column("ref", sa.String(255), nullable=False),
        sa.Column("commit", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("delivery_id", sa.String(255), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("builder", sa.String(64), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("engine_id", sa.String(36), nullable=True),
        sa.Column("epoch", sa.Integer(), nullable=True),
        sa.Column("lane", ExactKey, nullable=True),
        sa.Column("slot", sa.Integer(), nullable=True),
        sa.Column("image_id", sa.String(64), nullable=True),
        sa.Column("template_id", sa.Integer(), nullable=True),
        sa.Column("stack_id", sa.String(36), nullable=True),
        sa.Column("traversal", sa.String(36), nullable=True),
        sa.Column("verification", sa.Text(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("updated_at", DateTime, nullable=True),
        sa.Column("started_at", DateTime, nullable=True),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "app_id", "delivery_id", name="uniq_app_build0app_id0delivery_id"
        ),
        sa.UniqueConstraint(
            "app_id", "lane", name="uniq_app_build0app_id0lane"
        ),
        sa.UniqueConstraint(
            "app_id", "slot", name="uniq_app_build0app_id0slot"
        ),
    )
    op.create_index(
        "ix_app_build_app_created", "app_build", ["app_id", "created_at"]
    )
    op.create_index(
        "ix_app_build_app_branch", "app_build", ["app_id", "branch", "status"]
    )
    op.create_index("ix_app_build_status", "app_build", ["status"])
    op.create_table(
        "app_build_log",
        sa.Column("build_id", sa.String(36), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("build_id", "seq"),
    )


def downgrade():
    op.drop_table("app_build_log")
    op.drop_table("app_build")
