"""Database options: oslo.db's [database] group with heat_lite defaults."""

import os

from oslo_config import cfg
from oslo_db import options as db_options

from heat_lite.conf import paths


def default_connection():
    """SQLite file in the user's data directory (the embedded default)."""
    return "sqlite:///" + os.path.join(paths.data_dir(), "heat_lite.sqlite")


OPTS = [
    cfg.BoolOpt(
        "pool_pre_ping",
        default=False,
        help="Test each pooled connection with a round trip before every "
        "transaction (oslo.db always does). Off by default: it costs "
        "one round trip per transaction, a large share of a resource "
        "step. Without it, only a connection that sat idle in the pool "
        "for over half a second is tested before use, so a database "
        "restart does not fail the next transaction of every pooled "
        "connection; reads and writes that still meet a broken "
        "connection are retried.",
    ),
    cfg.BoolOpt(
        "prepared_statements",
        default=True,
        help="On PostgreSQL, prepare each of the engine's per-resource "
        "statements once per connection (server-side PREPARE) and "
        "EXECUTE it afterwards: PostgreSQL then skips parsing and "
        "planning, most of what those short statements cost it. Turn "
        "off behind a connection pooler that does not keep a session's "
        "state between transactions (PgBouncer in transaction or "
        "statement mode). No effect on SQLite and MariaDB.",
    ),
    cfg.BoolOpt(
        "asynchronous_instant_commits",
        default=True,
        help="On PostgreSQL, commit the finish of a resource step that "
        "did nothing outside the database (a side-effect-free resource, "
        "a step with nothing to do) without waiting for the WAL flush "
        "(synchronous_commit off for that transaction). A database crash "
        "can then lose the newest of those finishes, never one that "
        "anything outside the database acted on: every commit that "
        "precedes an action outside (a resource's lock) waits, and "
        "flushes all that came before it. The engines re-run a lost "
        "step after [engine] stall_timeout. Off: every commit waits.",
    ),
]


def register_opts(conf):
    db_options.set_defaults(conf)
    conf.register_opts(OPTS, group="database")


def set_runtime_default(conf):
    """Point ``[database] connection`` at the embedded SQLite file unless
    configured. Done at start-up, not import, so the generated sample
    does not carry one machine's home directory."""
    conf.set_default("connection", default_connection(), group="database")


def list_opts():
    return {"database": db_options.list_opts()[0][1] + OPTS}


__all__ = ["cfg", "register_opts", "list_opts"]
