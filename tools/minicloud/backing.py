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


def queue_consumers(transport_url, queue):
    """How many consumers RabbitMQ's ``queue`` has (0 if it does not
    exist yet), asked with a passive declare over ``transport_url``.

    An engine registers in the database before its RPC servers declare
    their topic queues; a call published to a topic whose queue does not
    exist yet is dropped by the broker and its caller times out. A fresh
    vhost has no queues, so "registered" is not yet "answering"."""
    import kombu
    from amqp import exceptions as amqp_exc

    url = transport_url.replace("rabbit://", "amqp://", 1)
    with kombu.Connection(url, connect_timeout=5) as conn:
        try:
            channel = conn.channel()
        except OSError:
            return 0  # the broker is down (a chaos test): nobody answers
        try:
            _, _, consumers = channel.queue_declare(queue=queue, passive=True)
        except amqp_exc.NotFound:
            return 0
        finally:
            try:
                channel.close()
            except Exception:  # noqa: BLE001 - closed by the broker's 404
                pass
        return consumers
