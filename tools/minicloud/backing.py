"""The test cloud's share of the machine's MariaDB and RabbitMQ.

Databases ``<prefix>_<service>`` and a vhost ``minicloud_<prefix>``: made
at start, dropped at stop. The shared servers themselves are never
started, stopped or reconfigured here.
"""

import shutil
import subprocess

import sqlalchemy as sa

from tools.minicloud import layout as layout_mod


def _admin(layout):
    return sa.create_engine(
        layout.mysql_url + "/", isolation_level="AUTOCOMMIT"
    )


def create_databases(layout):
    engine = _admin(layout)
    try:
        with engine.connect() as conn:
            for name in layout_mod.DB_NAMES:
                db = layout.database(name)
                conn.execute(sa.text("DROP DATABASE IF EXISTS %s" % db))
                conn.execute(
                    sa.text("CREATE DATABASE %s CHARACTER SET utf8mb4" % db)
                )
    finally:
        engine.dispose()


def drop_databases(layout):
    engine = _admin(layout)
    try:
        with engine.connect() as conn:
            for name in layout_mod.DB_NAMES:
                conn.execute(
                    sa.text(
                        "DROP DATABASE IF EXISTS %s" % layout.database(name)
                    )
                )
    finally:
        engine.dispose()


def _rabbitmqctl(*args, check=True):
    ctl = shutil.which("rabbitmqctl")
    if ctl is None:
        raise RuntimeError(
            "rabbitmqctl is not installed: the test cloud "
            "needs it to make its private vhost"
        )
    return subprocess.run(
        [ctl, *args], check=check, capture_output=True, timeout=60
    )


def create_vhost(layout):
    user = layout.rabbit.split("@", 1)[0].split(":", 1)[0]
    _rabbitmqctl("delete_vhost", layout.vhost, check=False)
    _rabbitmqctl("add_vhost", layout.vhost)
    _rabbitmqctl("set_permissions", "-p", layout.vhost, user, ".*", ".*", ".*")


def drop_vhost(layout):
    _rabbitmqctl("delete_vhost", layout.vhost, check=False)
