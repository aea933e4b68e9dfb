"""The engine's per-node statements, compiled once, sent as strings.

SQLAlchemy Core spends several times the driver's CPU on each statement
it executes, even a prebuilt one: its cache key, the compiled parameters,
the result's metadata. The statements every node step runs
(``db.statements``) are therefore compiled once per dialect, their bind
and result processors taken from the types, and each is sent with
``Connection.exec_driver_sql``: Core's transaction, its
``before/after_cursor_execute`` listeners (the statement counters) and
its error handling (oslo.db's filters: deadlock, duplicate entry,
disconnect, and the invalidation of a dropped connection) all still
apply, through public API only.

Measured in-process on PostgreSQL, N=1,000 OS::Heat::None, load 0.3:
engine CPU per resource 2.11 -> 1.44 ms (chain), 2.40 -> 1.59 ms (flat).
Executing on the DBAPI cursor directly measured 0.92 / 1.02 ms, but
translating its errors then needs Core's private exception handler.

Only plain statements are taken: no expanding (``IN``) parameters, no
escaped names; a statement that needs them stays with Core.

On PostgreSQL (psycopg2) each statement is also prepared on the server,
once per connection (``PREPARE``), then run by name (``EXECUTE``):
parsing and planning were most of what PostgreSQL spent on these short
statements. Measured on PostgreSQL 15 here, the record read (a join of
two primary-key lookups) took 0.33-0.39 ms a round trip sent as text and
0.12 ms prepared. ``[database] prepared_statements`` turns it off (a
pooler that does not keep session state between transactions). psycopg
3 prepares by itself, in as many round trips, but cost the client more
CPU per statement than this (``bench.prepared``; doc/bench/round2.md,
session 12), so psycopg2 and this layer stay.
"""

import itertools
import re
import threading

from heat_lite import conf

CONF = conf.CONF
_LOCK = threading.Lock()
_COMPILED = {}
# pyformat placeholders of a compiled statement.
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_NAMES = itertools.count(1)
# ``Connection.info`` key: the names prepared on that DBAPI connection.
# SQLAlchemy clears ``info`` when the connection is closed or
# invalidated, so a reconnected session prepares again.
_PREPARED = "heat_lite.prepared"
# PostgreSQL's "prepared statement does not exist".
_NOT_PREPARED = "26000"


class _Prepared:
    """The PREPARE and EXECUTE forms of a pyformat statement."""

    def __init__(self, sql):
        order = []

        def number(match):
            name = match.group(1)
            if name not in order:
                order.append(name)
            return "$%d" % (order.index(name) + 1)

        body = _PLACEHOLDER.sub(number, sql)
        if "%" in body:
            # An escaped percent sign: the PREPARE is sent without
            # parameters, so the driver would not unescape it.
            raise ValueError("a percent sign in %s" % sql)
        self.name = "heat_lite_%d" % next(_NAMES)
        self.prepare = "PREPARE %s AS %s" % (self.name, body)
        self.execute = "EXECUTE %s" % self.name
        if order:
            self.execute += "(%s)" % ", ".join("%%(%s)s" % n for n in order)


class _Compiled:
    """A statement compiled for one dialect."""

    def __init__(self, statement, dialect):
        compiled = statement.compile(dialect=dialect)
        if compiled.escaped_bind_names or any(
            bind.expanding for bind in compiled.binds.values()
        ):
            raise ValueError("not a plain statement: %s" % compiled)
        self.sql = str(compiled)
        self.positional = compiled.positional
        self.names = (
            tuple(compiled.positiontup) if compiled.positional else None
        )
        # Values fixed in the statement itself (e.g. ``engine_id=None``).
        self.fixed = {
            name: bind.value
            for name, bind in compiled.binds.items()
            if not bind.required and not bind.callable
        }
        self.binds = {
            name: processor
            for name, bind in compiled.binds.items()
            if (
                processor := bind.type.dialect_impl(dialect).bind_processor(
                    dialect
                )
            )
            is not None
        }
        columns = list(getattr(statement, "exported_columns", None) or ())
        # Row keys as Core's ``row._mapping`` has them (not the driver's
        # names, which SQLite leaves unspecified).
        self.keys = [c.name for c in columns] or None
        results = [
            c.type.dialect_impl(dialect).result_processor(dialect, None)
            for c in columns
        ]
        self.results = results if any(results) else None
        # Whether the driver's cursor has a ``lastrowid`` to read
        # (MySQL's LAST_INSERT_ID, SQLite's rowid; psycopg 3's has none).
        self.lastrowid = dialect.postfetch_lastrowid
        self.prepared = None
        if (
            dialect.name == "postgresql"
            and dialect.driver == "psycopg2"
            and not self.positional
        ):
            try:
                self.prepared = _Prepared(self.sql)
            except ValueError:
                pass

    def parameters(self, params):
        if self.fixed:
            params = dict(self.fixed, **params)
        if self.binds:
            params = dict(params)
            for name, processor in self.binds.items():
                params[name] = processor(params[name])
        if self.positional:
            return tuple(params[name] for name in self.names)
        return params


def _compiled(statement, dialect):
    key = (id(statement), dialect.name)
    compiled = _COMPILED.get(key)
    if compiled is None:
        with _LOCK:
            compiled = _COMPILED.get(key)
            if compiled is None:
                # The statement is kept in the key's value: its id stays
                # its own (prebuilt statements live for the process).
                compiled = _COMPILED[key] = (
                    statement,
                    _Compiled(statement, dialect),
                )
    return compiled[1]


class Result:
    """What a direct statement returned."""

    __slots__ = ("rowcount", "lastrowid", "keys", "rows")

    def __init__(self, rowcount, lastrowid, keys, rows):
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self.keys = keys
        self.rows = rows

    def dicts(self):
        keys = self.keys
        return [dict(zip(keys, row, strict=True)) for row in self.rows]

    def first(self):
        """The first row as a dict, or None."""
        if not self.rows:
            return None
        return dict(zip(self.keys, self.rows[0], strict=True))


def execute(connection, statement, params):
    """Run prebuilt ``statement`` with ``params`` on ``connection`` (a Core
    connection of ``session.transaction()``); return a ``Result``.

    ``exec_driver_sql`` sends the compiled string as it is: Core's
    listeners, its transaction and its error handling (oslo.db's
    filters, invalidation of a dropped connection) all apply.
    """
    compiled = _compiled(statement, connection.dialect)
    params = compiled.parameters(params)
    prepared = compiled.prepared
    if prepared is None or not CONF.database.prepared_statements:
        cursor = connection.exec_driver_sql(compiled.sql, params)
    else:
        cursor = _execute_prepared(connection, prepared, params)
    keys = rows = None
    if cursor.returns_rows:
        keys = compiled.keys or list(cursor.keys())
        rows = cursor.fetchall()
        processors = compiled.results
        if processors is not None:
            rows = [
                tuple(
                    p(v) if p is not None else v
                    for p, v in zip(processors, row, strict=True)
                )
                for row in rows
            ]
    lastrowid = cursor.lastrowid if compiled.lastrowid else None
    result = Result(cursor.rowcount, lastrowid, keys, rows)
    cursor.close()
    return result


def _execute_prepared(connection, prepared, params):
    """EXECUTE ``prepared``, preparing it first on this connection.

    A prepared statement outlives the transaction that prepared it, even
    one rolled back; only a new (or reset) server session lacks it.
    """
    done = connection.info.setdefault(_PREPARED, set())
    if prepared.name not in done:
        connection.exec_driver_sql(prepared.prepare).close()
        done.add(prepared.name)
    try:
        return connection.exec_driver_sql(prepared.execute, params)
    except Exception as exc:
        if _pgcode(exc) == _NOT_PREPARED:
            # The server session was reset under the pool (DISCARD ALL,
            # a pooler): this transaction is lost, the next prepares.
            connection.info.pop(_PREPARED, None)
        raise


def _pgcode(exc):
    """The SQLSTATE of a psycopg2 error under oslo.db's and Core's
    wrappers, or None."""
    seen = 0
    while exc is not None and seen < 5:
        code = getattr(exc, "pgcode", None)
        if code is not None:
            return code
        exc = (
            getattr(exc, "orig", None)
            or getattr(exc, "inner_exception", None)
            or exc.__cause__
        )
        seen += 1
    return None
