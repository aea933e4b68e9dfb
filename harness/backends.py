"""Real backing services for tests: private databases and vhosts.

Each test run gets its own PostgreSQL and MariaDB databases and its own
RabbitMQ virtual host, named after a random run id, so that runs never
see each other's data. A service that is not reachable makes the tests
that need it skip, except under ``CI=true`` where it is a failure.
"""

import atexit
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


def create_database(kind, owner=None, template=None):
    """Create a private database; return (sqlalchemy url, drop callable).

    :param owner: PostgreSQL only: a login role (see ``create_pg_role``)
        that owns the database and that the returned URL connects as.
    :param template: PostgreSQL only: the name of a database (that nobody
        is connected to) whose copy the new one is.
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
        if template is not None:
            create += " TEMPLATE %s" % template
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


# rabbitmqctl is an Erlang VM of its own: each run costs about a second
# and half a CPU-second, and a vhost took three (add_vhost,
# set_permissions, delete_vhost). Vhosts are made VHOST_BATCH at a time in
# one ``rabbitmqctl eval`` and each is handed out once, never used before
# and never used again; the used ones are deleted VHOST_BATCH at a time,
# and what is left when the process ends at exit.
VHOST_BATCH = 4
_ACTOR = '<<"heat_lite-tests">>'
_vhosts_ready = []
_vhosts_used = []


def _erl(names):
    return "[%s]" % ", ".join('<<"%s">>' % name for name in names)


def _rabbit_eval(expression, check=True):
    """Run ``expression`` in the broker (``rabbitmqctl eval``)."""
    return subprocess.run(
        [shutil.which("rabbitmqctl"), "eval", expression],
        check=check,
        capture_output=True,
        text=True,
    )


def _make_vhosts(user):
    names = [
        "heat_lite_%s_%s" % (RUN_ID, uuid.uuid4().hex[:6])
        for _ in range(VHOST_BATCH)
    ]
    done = _rabbit_eval(
        "[begin ok = rabbit_vhost:add(V, %(actor)s), "
        "ok = rabbit_auth_backend_internal:set_permissions("
        '<<"%(user)s">>, V, <<".*">>, <<".*">>, <<".*">>, %(actor)s) '
        "end || V <- %(names)s]."
        % dict(actor=_ACTOR, user=user, names=_erl(names))
    )
    if done.stdout.count("ok") != len(names):
        raise RuntimeError(
            "rabbitmqctl eval: %s%s" % (done.stdout, done.stderr)
        )
    if not _vhosts_ready and not _vhosts_used:
        atexit.register(_delete_vhosts, all_of_them=True)
    _vhosts_ready.extend(names)


def _delete_vhosts(all_of_them=False):
    names = list(_vhosts_used)
    if all_of_them:
        names += _vhosts_ready
        del _vhosts_ready[:]
    del _vhosts_used[:]
    if names:
        _rabbit_eval(
            "[rabbit_vhost:delete(V, %s) || V <- %s]." % (_ACTOR, _erl(names)),
            check=False,
        )


def create_vhost():
    """A private RabbitMQ vhost; return (transport_url, drop)."""
    host_port = RABBIT.rsplit("@", 1)[1]
    host, port = host_port.split(":")
    if not _reachable(host, int(port)):
        unavailable("RabbitMQ", "%s refused" % host_port)
    if shutil.which("rabbitmqctl") is None:
        # No admin tool: isolate by exchange and topics on the default
        # vhost instead (the caller sets a unique control_exchange).
        return "rabbit://%s/" % RABBIT, lambda: None
    if not _vhosts_ready:
        _make_vhosts(RABBIT.split(":", 1)[0])
    vhost = _vhosts_ready.pop(0)

    def _drop():
        _vhosts_used.append(vhost)
        if len(_vhosts_used) >= VHOST_BATCH:
            _delete_vhosts()

    return "rabbit://%s/%s" % (RABBIT, vhost), _drop
