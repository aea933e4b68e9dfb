"""Database engine set-up and transactions (oslo.db enginefacade).

Every query in ``heat_lite.db`` runs inside ``transaction()``. On SQLite
(the embedded single-process mode) write transactions are serialized by a
process-wide lock, WAL lets readers run alongside, and a busy timeout covers
a second process such as ``heat-lite-manage``. On MySQL the session runs at
READ COMMITTED so that conditional updates and counters see the latest
committed rows and take no gap locks. On PostgreSQL and MariaDB a
transaction left idle for half of ``[engine] engine_life_check_timeout``
is ended by the server: its process was paused (SIGSTOP, a frozen VM) and
will be claimed as dead, and the row locks such a transaction holds would
otherwise block the engine that takes its work over.
"""

import contextlib
import functools
import os
import threading
import time

import sqlalchemy as sa
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade

from heat_lite import conf
from heat_lite.common import counters
from heat_lite.db import pre_ping

CONF = conf.CONF

_LOCK = threading.Lock()
_SETUP = {"done": False, "sqlite": False, "autocommit": False, "dialect": None}
_SQLITE_WRITE_LOCK = threading.RLock()

# oslo.db's check-in hook only yields to other green threads; the engine
# runs native threads, where it is a wasted GIL hand-off per transaction.
enginefacade.configure(thread_checkin=False)


def _on_sqlite_connect(dbapi_conn, record):
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _idle_transaction_seconds():
    return max(1, int(CONF.engine.engine_life_check_timeout / 2))


def _on_mysql_connect(dbapi_conn, record):
    cursor = dbapi_conn.cursor()
    cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    cursor.execute("SELECT @@version")
    if "mariadb" in str(cursor.fetchone()[0]).lower():
        cursor.execute(
            "SET SESSION idle_transaction_timeout = %d"
            % _idle_transaction_seconds()
        )
    cursor.close()


def _on_postgresql_connect(dbapi_conn, record):
    cursor = dbapi_conn.cursor()
    cursor.execute(
        "SET idle_in_transaction_session_timeout = %d"
        % (_idle_transaction_seconds() * 1000)
    )
    cursor.close()
    dbapi_conn.commit()


def _count_statement(
    conn, cursor, statement, parameters, context, executemany
):
    counters.incr("sql_statements")


def _count_commit(conn):
    counters.incr("sql_commits")


# A pooled connection idle for longer than this is pinged before it is
# handed out. A busy engine reuses its connections within milliseconds, so
# the hot path pays nothing; a connection that sat in the pool across a
# database restart (which takes longer than this) is replaced instead of
# failing the transaction that gets it.
_PING_IF_IDLE_SECONDS = 0.5

# MySQL client errors that mean "no server" or "the connection is gone":
# can't connect (2002, 2003), gone away / lost (2006, 2013, 2055),
# shutdown in progress (1053), connection killed (1927), disconnected for
# inactivity (4031).
_MYSQL_GONE = frozenset({1053, 1927, 2002, 2003, 2006, 2013, 2055, 4031})
# PostgreSQL: connection exceptions (class 08), admin or crash shutdown,
# "the database system is starting up / shutting down" (57P01-57P03).
_PG_GONE = ("08", "57P01", "57P02", "57P03")


def _checked_in(dbapi_conn, record):
    record.info["idle_since"] = time.monotonic()


def _checked_out(dbapi_conn, record, proxy):
    idle_since = record.info.get("idle_since")
    if idle_since is None or (
        time.monotonic() - idle_since < _PING_IF_IDLE_SECONDS
    ):
        return
    try:
        cursor = dbapi_conn.cursor()
        cursor.execute("SELECT 1")
        cursor.close()
    except Exception as exc:  # noqa: BLE001 - any failure: reconnect
        # The pool drops this connection and hands out a new one.
        raise sa.exc.DisconnectionError() from exc


def install_idle_ping(engine):
    """Ping pooled connections of ``engine`` that sat idle (see above)."""
    sa.event.listen(engine, "checkin", _checked_in)
    sa.event.listen(engine, "checkout", _checked_out)


def _dbapi_error(exc):
    """The driver's own exception behind ``exc`` (or None)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, sa.exc.DBAPIError):
            if exc.connection_invalidated:
                return exc
            return exc.orig
        exc = (
            getattr(exc, "inner_exception", None)
            or exc.__cause__
            or exc.__context__
        )
    return None


def is_unavailable(exc):
    """True if ``exc`` means the database could not be reached or dropped
    the connection (a restart, a failover, a partition), or, on SQLite,
    that another connection held the file's write lock past the busy
    timeout: the same work may succeed later. False for errors of the
    statement itself.
    """
    if isinstance(exc, (db_exc.DBConnectionError, sa.exc.DisconnectionError)):
        return True
    orig = _dbapi_error(exc)
    if orig is None:
        return False
    if isinstance(orig, sa.exc.DBAPIError):  # invalidated connection
        return True
    module = type(orig).__module__.split(".")[0]
    name = type(orig).__name__
    if module == "pymysql":
        code = orig.args[0] if orig.args else None
        return code in _MYSQL_GONE or (name == "InterfaceError")
    if module == "sqlite3":
        return name == "OperationalError" and "database is locked" in str(orig)
    if module == "psycopg2":
        pgcode = getattr(orig, "pgcode", None)
        if name in ("OperationalError", "InterfaceError") and not pgcode:
            return True  # raised by libpq itself: no server answered
        return bool(pgcode) and pgcode.startswith(_PG_GONE)
    return False


# Deadlocks are rare (locks are taken in one order) but possible on
# PostgreSQL and MySQL, the database may be restarting (a dropped
# connection, or none to be had: oslo.db does not recognise every driver's
# "connection refused"), and on SQLite another process may hold the write
# lock (``is_unavailable``). A writer wrapped in this is a whole
# transaction, safe to run again. The retries wait about 30 s in all,
# longer than a restart.
retry_write = oslo_db_api.wrap_db_retry(
    max_retries=10,
    retry_on_deadlock=True,
    retry_on_disconnect=True,
    retry_interval=0.05,
    inc_retry_interval=True,
    exception_checker=is_unavailable,
)


# Reads are always safe to run again: a couple of quick attempts cover the
# one transaction per process that still meets a connection a restart
# broke, without making a caller wait long while the database is down.
_READ_ATTEMPTS = 3
_READ_RETRY_SECONDS = 0.1


def retry_read(fn):
    """Decorator: run a read-only query function again (at most
    ``_READ_ATTEMPTS`` times in all) while the database is unavailable;
    then the last error propagates (see ``is_unavailable``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for _ in range(_READ_ATTEMPTS - 1):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - re-raised below
                if not is_unavailable(exc):
                    raise
            time.sleep(_READ_RETRY_SECONDS)
        return fn(*args, **kwargs)

    return wrapper


def _configure_pre_ping():
    """Name ``pre_ping``'s plugin in the URL oslo.db will make the engine
    of (the operator's ``connection_parameters`` kept after it)."""
    try:
        enginefacade.configure(
            connection_parameters=pre_ping.query(
                CONF.database.pool_pre_ping,
                CONF.database.connection_parameters,
            )
        )
    except enginefacade.AlreadyStartedError:
        pass  # made once per process (tests inject their own engines)


def get_engine():
    """Return the writer engine, installing the dialect listeners once."""
    if not _SETUP["done"]:
        _make_sqlite_directory()
        _configure_pre_ping()
    engine = enginefacade.writer.get_engine()
    with _LOCK:
        if not _SETUP["done"]:
            sa.event.listen(engine, "before_cursor_execute", _count_statement)
            sa.event.listen(engine, "commit", _count_commit)
            if engine.dialect.name == "sqlite":
                sa.event.listen(engine, "connect", _on_sqlite_connect)
                _SETUP["sqlite"] = True
            elif engine.dialect.name == "mysql":
                sa.event.listen(engine, "connect", _on_mysql_connect)
            elif engine.dialect.name == "postgresql":
                sa.event.listen(engine, "connect", _on_postgresql_connect)
            # Without pre-ping (``pre_ping``), ping only connections that
            # sat idle (see above).
            if (
                not CONF.database.pool_pre_ping
                and engine.dialect.name != "sqlite"
            ):
                install_idle_ping(engine)
            _SETUP["autocommit"] = _autocommits(engine)
            _SETUP["dialect"] = engine.dialect.name
            engine.dispose()
            _SETUP["done"] = True
    return engine


def as_dict(row):
    """A Core row as the dict callers of ``heat_lite.db`` get (None for
    no row): rows never leave ``db/``."""
    return dict(row._mapping) if row is not None else None


def dialect():
    if not _SETUP["done"]:
        get_engine()
    return _SETUP["dialect"]


def write_lock():
    """The lock a writer outside ``transaction()`` (taskflow's backend)
    must hold: SQLite's process-wide one, else none."""
    get_engine()
    return _SQLITE_WRITE_LOCK if _SETUP["sqlite"] else contextlib.nullcontext()


# The read a thread keeps open for its next write (see ``continued``).
_HELD = threading.local()


def _autocommits(engine):
    """Whether reads and one-statement writes on ``engine`` run in
    autocommit (PostgreSQL through psycopg2; psycopg 3 alike, which
    ``bench.prepared`` compares with it).

    psycopg2 sends ``BEGIN`` as a round trip of its own before the first
    statement of a transaction, and the read's ``ROLLBACK`` is another:
    a one-statement read was three round trips, a one-statement write
    three (BEGIN, the statement, COMMIT). In autocommit each is one.
    Nothing is lost: at READ COMMITTED every statement has its own
    snapshot inside a transaction as well, no read here locks rows, and
    a one-statement write is atomic by itself (its ``set_config(...,
    true)`` applies to the statement's own implicit transaction).
    Measured on PostgreSQL 15 here: BEGIN + EXECUTE + COMMIT 0.18 ms,
    the same EXECUTE in autocommit 0.085 ms.
    """
    dialect = engine.dialect
    return dialect.name == "postgresql" and dialect.driver in (
        "psycopg2",
        "psycopg",
    )


def _set_autocommit(connection, on):
    """Switch the DBAPI connection under a Core ``connection`` (client
    side in psycopg2 and psycopg 3: nothing is sent). Core's own COMMIT
    and ROLLBACK then do nothing on the server, and its commit event still
    fires (the ``sql_commits`` counter counts the write)."""
    raw = connection.connection.dbapi_connection
    if on and raw.info.transaction_status:
        # Not idle: a pre-ping (``pre_ping``, ``_checked_out``) began a
        # transaction.
        raw.rollback()
    raw.autocommit = on


def _end_autocommit(connection):
    try:
        _set_autocommit(connection, False)
    except Exception:  # noqa: BLE001 - a closed connection: dropped anyway
        pass


@contextlib.contextmanager
def continued():
    """A scope in which a read made with ``transaction(keep=True)`` is
    continued by the thread's next transactions instead of ending.

    The next reads run in it too; the next write continues it and
    commits it (read and write: one transaction, one connection checkout,
    no ROLLBACK and BEGIN between them). Whatever is still open when the
    scope ends is rolled back. A node whose record is instant (nothing
    between its read and its finish but the engine's own CPU) reads this
    way; every guard of the write is in its statements (CAS, lock owner,
    sync point), and the transactions run at READ COMMITTED, so the
    write sees what it would have seen in a transaction of its own. Not
    on SQLite: there a read transaction (oslo.db emits BEGIN) keeps its
    snapshot, and its upgrade to a write fails (SQLITE_BUSY_SNAPSHOT) if
    another writer committed meanwhile. On PostgreSQL the read ran in
    autocommit (``_autocommits``): a write of one statement continues
    the connection (one checkout), a longer one takes a transaction of
    its own.
    """
    _HELD.depth = getattr(_HELD, "depth", 0) + 1
    try:
        yield
    finally:
        _HELD.depth -= 1
        if not _HELD.depth:
            _drop_held()


def release():
    """Inside a ``transaction(keep=True)``: end it as usual after all."""
    _HELD.release = True


def _close(connection):
    if _SETUP["autocommit"]:
        _end_autocommit(connection)
    connection.close()


def _drop_held():
    connection = getattr(_HELD, "connection", None)
    _HELD.connection = None
    if connection is not None:
        _close(connection)


@contextlib.contextmanager
def transaction(writer=True, keep=False, single=False):
    """Yield a connection whose transaction commits when the block ends
    (``writer``) or is rolled back (a read).

    Plain SQLAlchemy Core connections from oslo.db's engine: every query
    here is a Core statement, and an ORM session per transaction cost
    more CPU than the statements of a resource step themselves.
    oslo.db's exception filters are installed on the engine, so errors
    are still translated (deadlock, duplicate entry, disconnect).
    On PostgreSQL reads and ``single`` writes run in autocommit (see
    ``_autocommits``).

    :param keep: a read inside ``continued()``: leave its transaction
        open for the thread's next one.
    :param single: a write of one statement (atomic by itself).
    """
    lock = (
        _SQLITE_WRITE_LOCK
        if writer and _SETUP["sqlite"]
        else contextlib.nullcontext()
    )
    held = getattr(_HELD, "connection", None)
    if held is not None:
        if writer and _SETUP["autocommit"] and not single:
            # The held read ran in autocommit: a write of several
            # statements needs a transaction of its own.
            _drop_held()
        elif writer:
            _HELD.connection = None
            try:
                with lock:
                    yield held
                    held.commit()
            finally:
                _close(held)
            return
        else:
            try:
                yield held
            except BaseException:
                _drop_held()
                raise
            return
    engine = get_engine()
    autocommit = _SETUP["autocommit"] and (single or not writer)
    if (
        keep
        and not writer
        and getattr(_HELD, "depth", 0)
        and not _SETUP["sqlite"]
    ):
        _HELD.release = False
        connection = engine.connect()
        try:
            if autocommit:
                _set_autocommit(connection, True)
            yield connection
        except BaseException:
            _close(connection)
            raise
        if _HELD.release:
            _close(connection)
        else:
            _HELD.connection = connection
        return
    with lock, engine.connect() as connection:
        if autocommit:
            _set_autocommit(connection, True)
        try:
            yield connection
            if writer:
                connection.commit()
        finally:
            if autocommit:
                _end_autocommit(connection)


def _make_sqlite_directory():
    # SQLite makes the file but not its directory (the default is under
    # the user's data directory, absent on a fresh machine).
    path = sqlite_path()
    if path is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)


class DatabaseUnreachable(Exception):
    """The configured database did not accept a connection."""


def sqlite_path():
    """The file of ``[database] connection`` if it is an SQLite file."""
    if not CONF.database.connection:
        return None
    url = sa.engine.make_url(CONF.database.connection)
    if url.get_backend_name() != "sqlite" or url.database in (
        None,
        "",
        ":memory:",
    ):
        return None
    return os.path.abspath(url.database)


def check_connection(timeout):
    """Open and close one connection within ``timeout`` seconds.

    A throwaway engine rather than oslo.db's, which retries for
    ``max_retries`` x ``retry_interval`` (100 s by default) before it
    gives up. SQLite is a local file, made when first used: nothing to
    reach, and this check creates no file.
    """
    url = sa.engine.make_url(CONF.database.connection)
    backend = url.get_backend_name()
    if backend == "sqlite":
        return
    args = (
        {"connect_timeout": timeout}
        if backend in ("postgresql", "mysql")
        else {}
    )
    probe = sa.create_engine(
        url, poolclass=sa.pool.NullPool, connect_args=args
    )
    try:
        with probe.connect():
            pass
    except sa.exc.DBAPIError as exc:
        where = "%s:%s/%s" % (
            url.host or "localhost",
            url.port or "",
            url.database or "",
        )
        raise DatabaseUnreachable(
            "%s (%s)" % (where, _first_line(exc.orig))
        ) from None
    finally:
        probe.dispose()


def _first_line(error):
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def reset():
    """Forget the engine (tests that switch databases in one process)."""
    with _LOCK:
        _SETUP.update(done=False, sqlite=False, autocommit=False, dialect=None)
