"""rollouts: rollout, rollout_target and taskflow's persistence tables

Rollouts run as taskflow flows persisted in this database. taskflow's
SQLAlchemy backend brings its own alembic history, but that history
would share (and fight over) our ``alembic_version`` table, so its final
schema (taskflow 6.x ``persistence/backends/sqlalchemy/tables.py``) is
created here instead; a model-vs-migration test checks it against the
installed taskflow.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-08 10:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql, postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")
# taskflow's JSONType: native JSON on PostgreSQL, text elsewhere.
Json = sa.UnicodeText().with_variant(postgresql.JSON(), "postgresql")
ATOM_TYPES = ("TASK_DETAIL", "RETRY_DETAIL")
INTENTIONS = ("EXECUTE", "IGNORE", "REVERT", "RETRY")


def _rollouts():
    op.create_table(
        "rollout",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("spec", LongText, nullable=False),
        sa.Column("caller_token", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("rollback_requested", sa.Boolean(), nullable=False),
        sa.Column("engine_id", sa.String(36), nullable=True),
        sa.Column("epoch", sa.Integer(), nullable=True),
        sa.Column("created_at", DateTime, nullable=False),
        sa.Column("updated_at", DateTime, nullable=True),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_rollout_tenant", "rollout", ["tenant", "created_at", "id"]
    )
    op.create_table(
        "rollout_target",
        sa.Column("rollout_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("stack_name", sa.String(255), nullable=False),
        sa.Column("batch", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("traversal_id", sa.String(36), nullable=True),
        sa.Column("revert_traversal_id", sa.String(36), nullable=True),
        sa.Column("revert_marked_at", DateTime, nullable=True),
        sa.Column("previous", LongText, nullable=True),
        sa.Column("started_at", DateTime, nullable=True),
        sa.Column("finished_at", DateTime, nullable=True),
        sa.PrimaryKeyConstraint("rollout_id", "position"),
    )


def _taskflow():
    def stamps():
        return [
            sa.Column("created_at", sa.DateTime(), nullable=True),
            sa.Column("updated_at", sa.DateTime(), nullable=True),
        ]

    op.create_table(
        "logbooks",
        *stamps(),
        sa.Column("meta", Json, nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("uuid", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("uuid"),
    )
    op.create_table(
        "flowdetails",
        *stamps(),
        sa.Column("parent_uuid", sa.String(64), nullable=True),
        sa.Column("meta", Json, nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("state", sa.String(255), nullable=True),
        sa.Column("uuid", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["parent_uuid"], ["logbooks.uuid"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("uuid"),
    )
    op.create_table(
        "atomdetails",
        *stamps(),
        sa.Column("meta", Json, nullable=True),
        sa.Column("parent_uuid", sa.String(64), nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("version", sa.String(64), nullable=True),
        sa.Column("state", sa.String(255), nullable=True),
        sa.Column("uuid", sa.String(64), nullable=False),
        sa.Column("failure", Json, nullable=True),
        sa.Column("results", Json, nullable=True),
        sa.Column("revert_results", Json, nullable=True),
        sa.Column("revert_failure", Json, nullable=True),
        sa.Column(
            "atom_type", sa.Enum(*ATOM_TYPES, name="atom_types"), nullable=True
        ),
        sa.Column(
            "intention", sa.Enum(*INTENTIONS, name="intentions"), nullable=True
        ),
        sa.ForeignKeyConstraint(
            ["parent_uuid"], ["flowdetails.uuid"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("uuid"),
    )


def upgrade():
    _rollouts()
    _taskflow()


def downgrade():
    op.drop_table("atomdetails")
    op.drop_table("flowdetails")
    op.drop_table("logbooks")
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        sa.Enum(name="atom_types").drop(bind, checkfirst=True)
        sa.Enum(name="intentions").drop(bind, checkfirst=True)
    op.drop_table("rollout_target")
    op.drop_index("ix_rollout_tenant", table_name="rollout")
    op.drop_table("rollout")
