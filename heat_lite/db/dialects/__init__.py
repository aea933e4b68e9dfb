"""What each database does differently on the hot path, chosen once.

``writes()`` is the one place that looks at which database this is: it
returns the configured database's ``base.Writes`` -- ``postgresql`` (a
node's finish in one statement), ``mysql`` (MySQL and MariaDB: the record
and its sync point in one UPDATE, the next cleanup node locked in it),
or the portable ``base.Writes`` (SQLite) -- made the first time it is
asked after the engine is set up, and the same object from then on. The
functions of the hot path (``db.finish``, ``db.records``,
``db.traversals``) ask it for their dialect's writes instead of testing
the dialect themselves.
"""

from heat_lite.db import session as db_session
from heat_lite.db.dialects import base, mysql, postgresql

Writes = base.Writes
Finish = base.Finish

# {SQLAlchemy dialect name: its implementation}; any other: portable SQL.
_IMPLEMENTATIONS: dict[str, type[base.Writes]] = {
    "postgresql": postgresql.PostgreSQL,
    "mysql": mysql.MySQL,
}
# {dialect name: the writes made for it} (a test process may switch
# between databases: ``session.reset``).
_CHOSEN: dict[str, base.Writes] = {}


def writes() -> Writes:
    """The writes of the database ``session.get_engine`` set up."""
    name = db_session.dialect()
    chosen = _CHOSEN.get(name)
    if chosen is None:
        engine = db_session.get_engine()
        with engine.connect():
            # What the dialect can return depends on the server's version,
            # which it learns on the engine's first connection.
            pass
        made = _IMPLEMENTATIONS.get(name, base.Writes)(engine.dialect)
        chosen = _CHOSEN.setdefault(name, made)
    return chosen
