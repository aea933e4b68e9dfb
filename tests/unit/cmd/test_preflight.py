"""What a start without its database driver says (the commands
themselves: tests/functional/test_first_contact.py)."""

import pytest

from heat_lite import conf
from heat_lite.cmd import preflight

CONF = conf.CONF


@pytest.fixture
def connection():
    def use(url):
        CONF.set_override("connection", url, group="database")

    yield use
    CONF.clear_override("connection", group="database")


def test_a_driver_of_an_extra_names_the_extra(connection):
    connection("postgresql://heat:s3cr3t@db/heat")
    text = preflight._missing_driver("psycopg2")
    assert "(postgresql://)" in text
    assert "pip install '.[postgresql]'" in text
    assert "s3cr3t" not in text


def test_another_driver_names_the_module_and_the_extras(connection):
    connection("mysql+mysqldb://heat:s3cr3t@db/heat")
    text = preflight._missing_driver("MySQLdb")
    assert "(mysql+mysqldb://)" in text
    assert "no module named MySQLdb" in text
    assert "mysql+pymysql:// (mysql)" in text
    assert "s3cr3t" not in text
