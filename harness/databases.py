"""A private database for in-process tests, on any backend.

oslo.db's enginefacade starts once per process; tests that need a
database of their own (or several backends in one run) inject an engine
with oslo.db's test factory and take it out again afterwards.
"""

import contextlib

from oslo_db.sqlalchemy import enginefacade, engines, orm

from harness import backends
from heat_lite.db import migration, pre_ping, session


@contextlib.contextmanager
def private_database(kind, tmp_path):
    """Yield the URL of a migrated database of ``kind`` (sqlite: a file
    under ``tmp_path``) that heat_lite.db uses until the block ends."""
    drop = None
    if kind == "sqlite":
        url = "sqlite:///%s/db.sqlite" % tmp_path
    else:
        url, drop = backends.create_database(kind)
    # Pre-ping as heat_lite's default (``[database] pool_pre_ping``).
    engine = engines.create_engine(pre_ping.url(url, False))
    factory = enginefacade._TestTransactionFactory(
        engine, orm.get_maker(engine), apply_global=True
    )
    session.reset()
    try:
        migration.upgrade("head", engine=engine)
        yield url
    finally:
        factory.dispose_global()
        engine.dispose()
        session.reset()
        if drop is not None:
            drop()


def lock_waits(engine, kind):
    """How many sessions of ``engine``'s database wait for a row lock now
    (other tests share the server, so only this database counts): a
    test that holds a transaction open waits on this, not on a clock,
    to know its racer reached the lock."""
    if kind == "postgresql":
        sql = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    else:
        sql = (
            "SELECT count(*) FROM information_schema.innodb_trx AS t "
            "JOIN information_schema.processlist AS p "
            "ON p.id = t.trx_mysql_thread_id "
            "WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()"
        )
    with engine.connect() as conn:
        return conn.exec_driver_sql(sql).scalar()
