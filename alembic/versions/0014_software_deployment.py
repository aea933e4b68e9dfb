"""software_deployment table

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 03:20:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
_LONGTEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


def upgrade():
    op.create_table(
        "software_deployment",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("config_id", sa.String(length=36), nullable=False),
        sa.Column("server_id", sa.String(length=255), nullable=False),
        sa.Column("input_values", _LONGTEXT, nullable=True),
        sa.Column("output_values", _LONGTEXT, nullable=True),
        sa.Column("action", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=255), nullable=True),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column(
            "stack_user_project_id", sa.String(length=64), nullable=True
        ),
        sa.Column("created_at", _DATETIME, nullable=False),
        sa.Column("updated_at", _DATETIME, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_software_deployment_tenant",
        "software_deployment",
        ["tenant", "created_at"],
    )
    op.create_index(
        "ix_software_deployment_server",
        "software_deployment",
        ["server_id", "created_at"],
    )
    op.create_index(
        "ix_software_deployment_config", "software_deployment", ["config_id"]
    )


def downgrade():
    for name in ("config", "server", "tenant"):
        op.drop_index(
            "ix_software_deployment_" + name, table_name="software_deployment"
        )
    op.drop_table("software_deployment")
