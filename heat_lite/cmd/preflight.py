"""Checks a command makes before it starts serving.

A service that cannot work should say why in one line and exit, not hang
retrying or die in a traceback: a missing broker, an unreachable database,
a port already taken, a second heat-lite-all on the same SQLite file.
Each check raises ``StartupError`` with a message for the operator; the
command's ``main`` turns it into a line on stderr and exit code 1.

Messages name hosts and ports, never a URL: URLs carry passwords.
"""

import fcntl
import os

import oslo_messaging as messaging

from heat_lite import conf
from heat_lite.db import session

CONF = conf.CONF

# Seconds a start-time check waits for a broker or database to answer.
CHECK_TIMEOUT = 5


class StartupError(Exception):
    """The command cannot start; the message says why and what to do."""


def uses_broker():
    return not CONF.transport_url.startswith(conf.EMBEDDED_TRANSPORT)


def require_broker():
    """heat-lite-api and heat-lite-engine talk over a real broker: the
    in-process transport would leave each of them alone with its calls."""
    if not uses_broker():
        raise StartupError(
            "a message broker is needed: set [DEFAULT] transport_url "
            "(rabbit://user:password@host:5672/) in the config file; "
            "%s works only inside heat-lite-all" % conf.EMBEDDED_TRANSPORT
        )


def _broker_hosts():
    url = messaging.TransportURL.parse(CONF, CONF.transport_url)
    return url, [
        (h.hostname or "localhost", h.port or 5672) for h in url.hosts
    ] or [("localhost", 5672)]


def check_broker():
    """Connect (and log in) to one of the broker's hosts, once, briefly."""
    url, hosts = _broker_hosts()
    if url.transport not in ("rabbit", "amqp"):
        return
    import kombu

    errors = []
    for host, port in hosts:
        user = next((h.username for h in url.hosts if h.username), "guest")
        password = next((h.password for h in url.hosts if h.password), "guest")
        connection = kombu.Connection(
            hostname=host,
            port=port,
            userid=user,
            password=password,
            virtual_host=url.virtual_host or "/",
            connect_timeout=CHECK_TIMEOUT,
            transport="pyamqp",
        )
        try:
            connection.connect()
            return
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            errors.append("%s:%s (%s)" % (host, port, _reason(exc)))
        finally:
            connection.release()
    raise StartupError(
        "cannot reach the message broker at %s; check "
        "[DEFAULT] transport_url" % ", ".join(errors)
    )


# The database drivers are extras of heat_lite (setup.cfg), not
# dependencies: the module each one is imported as, and its extra.
DRIVER_EXTRAS = {"psycopg2": "postgresql", "pymysql": "mysql"}


def check_database():
    """Open one connection to ``[database] connection``, briefly."""
    try:
        session.check_connection(CHECK_TIMEOUT)
    except session.DatabaseUnreachable as exc:
        raise StartupError(
            "cannot reach the database: %s; check [database] connection" % exc
        ) from None
    except ModuleNotFoundError as exc:
        raise StartupError(_missing_driver(exc.name)) from None


def _missing_driver(module):
    """What to install when the connection's driver is not there (the
    URL's scheme only: the rest of it may carry a password)."""
    scheme = CONF.database.connection.partition("://")[0]
    top = (module or "").split(".")[0]
    extra = DRIVER_EXTRAS.get(top)
    if extra is None:
        return (
            "the database driver of [database] connection (%s://) is not "
            "installed: no module named %s; heat_lite's extras install "
            "postgresql+psycopg2:// (postgresql) and mysql+pymysql:// "
            "(mysql)" % (scheme, module)
        )
    return (
        "the database driver of [database] connection (%s://) is not "
        "installed: no module named %s; install heat_lite's %s extra: "
        "pip install '.[%s]' from heat_lite's source tree"
        % (scheme, top, extra, extra)
    )


def listen(server):
    """Bind and listen now, so a taken port fails before anything else
    starts (cheroot binds in ``prepare``)."""
    try:
        server.prepare()
    except OSError as exc:
        raise StartupError(
            "cannot listen on %s:%s: %s"
            % (CONF.api.bind_host, CONF.api.bind_port, exc.strerror or exc)
        ) from None


def lock_sqlite_file():
    """Keep one heat-lite-all per SQLite file.

    Two embedded services on one file would see each other's stacks while
    neither can reach the other's in-process messages. The lock is held
    by the returned open file until the process exits.
    """
    path = session.sqlite_path()
    if path is None:
        return None
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    handle = open(path + ".lock", "a+")  # noqa: SIM115 - held for life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise StartupError(
            "the database %s is in use by another heat-lite-all (pid %s); "
            "give this one its own [database] connection" % (path, owner)
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def _reason(exc):
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
