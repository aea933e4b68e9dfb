"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-30 11:13:35.375748
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=True),
        sa.Column(
            "physical_resource_id", sa.String(length=255), nullable=True
        ),
        sa.Column("resource_action", sa.String(length=16), nullable=True),
        sa.Column("resource_status", sa.String(length=16), nullable=True),
        sa.Column("resource_status_reason", sa.Text(), nullable=True),
        sa.Column("resource_type", sa.String(length=255), nullable=True),
        sa.Column("resource_properties", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid"),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index(
            "ix_event_stack_id", ["stack_id", "id"], unique=False
        )

    op.create_table(
        "raw_template",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=True),
        sa.Column(
            "template",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "environment",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "files",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("raw_template", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_raw_template_stack_id"), ["stack_id"], unique=False
        )

    op.create_table(
        "service",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("engine_id", sa.String(length=36), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=False),
        sa.Column("binary", sa.String(length=255), nullable=False),
        sa.Column("topic", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("report_interval", sa.Float(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "deleted_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=True,
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("engine_id"),
    )
    op.create_table(
        "sync_point",
        sa.Column("traversal_id", sa.String(length=36), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=8), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("remaining", sa.Integer(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("traversal_id", "entity_id", "phase"),
    )
    with op.batch_alter_table("sync_point", schema=None) as batch_op:
        batch_op.create_index(
            "ix_sync_point_stack_id", ["stack_id"], unique=False
        )

    op.create_table(
        "traversal",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column(
            "graph",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "cleanup_graph",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=True,
        ),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("traversal", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_traversal_stack_id"), ["stack_id"], unique=False
        )

    op.create_table(
        "stack",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("live_name", sa.String(length=255), nullable=True),
        sa.Column("username", sa.String(length=255), nullable=True),
        sa.Column("owner_id", sa.String(length=36), nullable=True),
        sa.Column(
            "parent_resource_name", sa.String(length=255), nullable=True
        ),
        sa.Column("nested_depth", sa.Integer(), nullable=False),
        sa.Column("raw_template_id", sa.Integer(), nullable=False),
        sa.Column("prev_raw_template_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("current_traversal", sa.String(length=36), nullable=False),
        sa.Column("timeout", sa.Integer(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("tags", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=True,
        ),
        sa.Column(
            "action_started_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "deleted_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=True,
        ),
        sa.ForeignKeyConstraint(
            ["prev_raw_template_id"],
            ["raw_template.id"],
        ),
        sa.ForeignKeyConstraint(
            ["raw_template_id"],
            ["raw_template.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "tenant", "live_name", name="uniq_stack0tenant0live_name"
        ),
    )
    with op.batch_alter_table("stack", schema=None) as batch_op:
        batch_op.create_index("ix_stack_owner", ["owner_id"], unique=False)
        batch_op.create_index("ix_stack_status", ["status"], unique=False)
        batch_op.create_index(
            "ix_stack_tenant_name", ["tenant", "name"], unique=False
        )

    op.create_table(
        "resource",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column(
            "physical_resource_id", sa.String(length=255), nullable=True
        ),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("template_id", sa.Integer(), nullable=False),
        sa.Column("converged_traversal", sa.String(length=36), nullable=True),
        sa.Column(
            "properties_data",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=True,
        ),
        sa.Column(
            "attr_data",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql"),
            nullable=True,
        ),
        sa.Column("rsrc_data", sa.Text(), nullable=True),
        sa.Column("rsrc_metadata", sa.Text(), nullable=True),
        sa.Column("requires", sa.Text(), nullable=True),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        sa.Column("engine_id", sa.String(length=36), nullable=True),
        sa.Column("lock_traversal", sa.String(length=36), nullable=True),
        sa.Column("atomic_key", sa.Integer(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"),
            nullable=True,
        ),
        sa.ForeignKeyConstraint(
            ["stack_id"],
            ["stack.id"],
        ),
        sa.ForeignKeyConstraint(
            ["template_id"],
            ["raw_template.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "stack_id",
            "name",
            "version",
            name="uniq_resource0stack_id0name0version",
        ),
        sa.UniqueConstraint("uuid"),
    )
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.create_index(
            "ix_resource_engine_id", ["engine_id"], unique=False
        )


def downgrade():
    with op.batch_alter_table("resource", schema=None) as batch_op:
        batch_op.drop_index("ix_resource_engine_id")

    op.drop_table("resource")
    with op.batch_alter_table("stack", schema=None) as batch_op:
        batch_op.drop_index("ix_stack_tenant_name")
        batch_op.drop_index("ix_stack_status")
        batch_op.drop_index("ix_stack_owner")

    op.drop_table("stack")
    with op.batch_alter_table("traversal", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_traversal_stack_id"))

    op.drop_table("traversal")
    with op.batch_alter_table("sync_point", schema=None) as batch_op:
        batch_op.drop_index("ix_sync_point_stack_id")

    op.drop_table("sync_point")
    op.drop_table("service")
    with op.batch_alter_table("raw_template", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_raw_template_stack_id"))

    op.drop_table("raw_template")
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index("ix_event_stack_id")

    op.drop_table("event")
