"""Database options: oslo.db's [database] group with heat_lite defaults."""

import os

from oslo_config import cfg
from oslo_db import options as db_options

from heat_lite.conf import paths


def default_connection():
    """SQLite file in the user's data directory (the embedded default)."""
    return "sqlite:///" + os.path.join(paths.data_dir(), "heat_lite.sqlite")


def register_opts(conf):
    db_options.set_defaults(conf, connection=default_connection())


def list_opts():
    return {"database": db_options.list_opts()[0][1]}


__all__ = ["cfg", "register_opts", "list_opts"]
