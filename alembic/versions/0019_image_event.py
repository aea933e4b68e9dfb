"""image_event: what retention did to each image (issue 30: events on
the app for every image hidden, deleted, revived or refused)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 12:50:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0019"
revision = REVISION
down_revision = "0018"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade():
    op.create_table(
        "image_event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("image_id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("app_id", sa.String(36), nullable=True),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_image_event_image", "image_event", ["image_id", "id"])
    op.create_index(
        "ix_image_event_app", "image_event", ["tenant", "app_id", "id"]
    )


def downgrade():
    op.drop_table("image_event")
