"""Models and alembic migrations never drift, on every backend."""

import unittest

import pytest
import sqlalchemy as sa
from oslo_db.sqlalchemy import test_migrations

from harness import backends
from heat_lite.db import migration, models

_TASKFLOW = ("logbooks", "flowdetails", "atomdetails")


def _taskflow_pk_unique(entry):
    """A diff entry about the ``unique`` taskflow adds to its primary
    keys (PostgreSQL folds it into the primary key)."""
    if entry[0] not in ("add_constraint", "remove_constraint"):
        return False
    constraint = entry[1]
    return (
        isinstance(constraint, sa.UniqueConstraint)
        and constraint.table.name in _TASKFLOW
        and [c.name for c in constraint.columns] == ["uuid"]
    )


class _MigrationsMixin:
    kind = None

    def setUp(self):
        super().setUp()
        if self.kind == "sqlite":
            self.url = "sqlite:///%s/m.sqlite" % self._tmp
        else:
            self.url, drop = backends.create_database(self.kind)
            self.addCleanup(drop)
        self.engine = sa.create_engine(self.url)
        self.addCleanup(self.engine.dispose)

    @pytest.fixture(autouse=True)
    def _tmpdir(self, tmp_path):
        self._tmp = tmp_path

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.full_metadata()

    def db_sync(self, engine):
        migration.upgrade("head", engine=engine)

    def filter_metadata_diff(self, diff):
        # taskflow declares its primary keys ``unique`` as well; some
        # backends reflect that second constraint, others fold it into
        # the primary key.
        return [d for d in diff if not _taskflow_pk_unique(d)]

    def test_upgrade_downgrade_upgrade(self):
        migration.upgrade("head", engine=self.engine)
        assert migration.version(self.engine) is not None
        migration.downgrade("base", engine=self.engine)
        assert migration.version(self.engine) is None
        tables = set(sa.inspect(self.engine).get_table_names())
        assert tables <= {"alembic_version"}
        migration.upgrade("head", engine=self.engine)
        assert "resource" in sa.inspect(self.engine).get_table_names()


class TestSQLite(
    _MigrationsMixin, test_migrations.ModelsMigrationsSync, unittest.TestCase
):
    kind = "sqlite"


class TestPostgreSQL(
    _MigrationsMixin, test_migrations.ModelsMigrationsSync, unittest.TestCase
):
    kind = "postgresql"


class TestMySQL(
    _MigrationsMixin, test_migrations.ModelsMigrationsSync, unittest.TestCase
):
    kind = "mysql"
