"""Real backing services for tests: private databases and vhosts.

Each test run gets its own PostgreSQL and MariaDB databases and its own
RabbitMQ virtual host, named after a random run id, so that runs never
see each other's data. A service that is not reachable makes the tests
that need it skip, except under ``CI=true`` where it is a failure.
"""

import os
import shutil
import socket
import subprocess
import uuid

import pytest

RUN_ID = uuid.uuid4().hex[:10]
PG_URL = os.environ.get(
    "HEAT_LITE_TEST_PG", "postgresql+psycopg2://postgres@127.0.0.1:5432"
)
MYSQL_URL = os.environ.get(
    "HEAT_LITE_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306"
)
RABBIT = os.environ.get("HEAT_LITE_TEST_RABBIT", "guest:guest@127.0.0.1:5672")


def in_ci():
    return os.environ.get("CI", "").lower() == "true"


def unavailable(what, why):
    """Skip, or fail under CI, when a backing service is missing."""
    message = "%s is not available: %s" % (what, why)
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def _reachable(host, port):
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def create_database(kind, owner=None):
    """Create a private database; return (sqlalchemy url, drop callable).

    :param owner: PostgreSQL only: a login role (see ``create_pg_role``)
        that owns the database and that the returned URL connects as.
    """
    import sqlalchemy as sa

    name = "heat_lite_%s_%s" % (RUN_ID, uuid.uuid4().hex[:6])
    if kind == "postgresql":
        if not _reachable("127.0.0.1", 5432):
            unavailable("PostgreSQL", "127.0.0.1:5432 refused")
        admin = sa.create_engine(
            PG_URL + "/postgres", isolation_level="AUTOCOMMIT"
        )
        create = "CREATE DATABASE %s" % name
        drop = "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name
        url = "%s/%s" % (PG_URL, name)
        if owner is not None:
            create += " OWNER %s" % owner
            url = sa.engine.make_url(url).set(username=owner)
            url = url.render_as_string(hide_password=False)
    elif kind == "mysql":
        if not _reachable("127.0.0.1", 3306):
            unavailable("MariaDB", "127.0.0.1:3306 refused")
        admin = sa.create_engine(MYSQL_URL + "/", isolation_level="AUTOCOMMIT")
        create = "CREATE DATABASE %s CHARACTER SET utf8mb4" % name
        drop = "DROP DATABASE IF EXISTS %s" % name
        url = "%s/%s?charset=utf8mb4" % (MYSQL_URL, name)
    else:
        raise ValueError(kind)
    with admin.connect() as conn:
        conn.execute(sa.text(create))

    def _drop():
        with admin.connect() as conn:
            conn.execute(sa.text(drop))
        admin.dispose()

    return url, _drop


def create_pg_role():
    """Create a private PostgreSQL login role that is not a superuser, so
    that ``CONNECTION LIMIT`` applies to it (superusers are exempt).

    :returns: (role name, set_limit(n) with -1 for none, drop callable).
    """
    import sqlalchemy as sa

    if not _reachable("127.0.0.1", 5432):
        unavailable("PostgreSQL", "127.0.0.1:5432 refused")
    name = "heat_lite_%s_%s" % (RUN_ID, uuid.uuid4().hex[:6])
    admin = sa.create_engine(
        PG_URL + "/postgres", isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(sa.text("CREATE ROLE %s LOGIN" % name))

    def set_limit(limit):
        with admin.connect() as conn:
            conn.execute(
                sa.text("ALTER ROLE %s CONNECTION LIMIT %d" % (name, limit))
            )

    def _drop():
        with admin.connect() as conn:
            conn.execute(sa.text("DROP ROLE IF EXISTS %s" % name))
        admin.dispose()

    return name, set_limit, _drop


def create_vhost():
    """Create a private RabbitMQ vhost; return (transport_url, drop)."""
    host_port = RABBIT.rsplit("@", 1)[1]
    host, port = host_port.split(":")
    if not _reachable(host, int(port)):
        unavailable("RabbitMQ", "%s refused" % host_port)
    vhost = "heat_lite_%s_%s" % (RUN_ID, uuid.uuid4().hex[:6])
    ctl = shutil.which("rabbitmqctl")
    if ctl is None:
        # No admin tool: isolate by exchange and topics on the default
        # vhost instead (the caller sets a unique control_exchange).
        return "rabbit://%s/" % RABBIT, lambda: None
    subprocess.run([ctl, "add_vhost", vhost], check=True, capture_output=True)
    subprocess.run(
        [ctl, "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
        check=True,
        capture_output=True,
    )

    def _drop():
        subprocess.run([ctl, "delete_vhost", vhost], capture_output=True)

    return "rabbit://%s/%s" % (RABBIT, vhost), _drop
