"""managed_image, record_image, image_reference: image retention by
reference (issue 30, doc/specs/image_retention.md)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04 07:50:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# The one place this revision's id is written (renumbered at merge).
REVISION = "0017"
revision = REVISION
down_revision = "0016"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade():
    op.create_table(
        "managed_image",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("app_id", sa.String(36), nullable=True),
        sa.Column("branch", sa.String(255), nullable=True),
        sa.Column("build_id", sa.String(36), nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("deployed_at", DateTime, nullable=True),
        sa.Column("unneeded_at", DateTime, nullable=True),
        sa.Column("hidden_at", DateTime, nullable=True),
        sa.Column("delete_after", DateTime, nullable=True),
        sa.Column("deleted_at", DateTime, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_managed_image_app",
        "managed_image",
        ["app_id", "branch", "deployed_at"],
    )
    op.create_index(
        "ix_managed_image_tenant", "managed_image", ["tenant", "state"]
    )
    op.create_table(
        "record_image",
        sa.Column("image_id", sa.String(36), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("image_id", "resource_id"),
    )
    op.create_index(
        "ix_record_image_resource", "record_image", ["resource_id"]
    )
    op.create_table(
        "image_reference",
        sa.Column("image_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("created_at", DateTime, nullable=False),
        sa.PrimaryKeyConstraint("image_id", "kind", "holder"),
    )
    op.create_index(
        "ix_image_reference_holder", "image_reference", ["kind", "holder"]
    )


def downgrade():
    op.drop_table("image_reference")
    op.drop_table("record_image")
    op.drop_table("managed_image")
