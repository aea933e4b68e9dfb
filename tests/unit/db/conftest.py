"""The database the db-level tests of a module share, on each dialect."""

import pytest

from harness import databases
from heat_lite import conf
from heat_lite.db import session


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def database(request, tmp_path_factory):
    """(dialect kind, engine) of a private database for the module."""
    conf.CONF([], project="heat_lite")
    with databases.private_database(
        request.param, tmp_path_factory.mktemp("db")
    ):
        yield request.param, session.get_engine()
