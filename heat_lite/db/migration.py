"""Schema migrations with alembic.

The alembic environment lives at the top of the source tree (``alembic/``)
and is installed inside the package as ``heat_lite.db.migrations``, so the
same scripts run from a checkout and from an installed wheel.
"""

import importlib.util
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration

from heat_lite.db import session


def _script_location():
    spec = importlib.util.find_spec("heat_lite.db.migrations")
    if spec is not None and spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "alembic")


def _config():
    cfg = alembic_config.Config()
    cfg.set_main_option("script_location", _script_location())
    return cfg


def _run(fn, *args, engine=None):
    engine = engine or session.get_engine()
    cfg = _config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        fn(cfg, *args)


def upgrade(revision="head", engine=None):
    """Upgrade the database to ``revision``."""
    _run(command.upgrade, revision, engine=engine)


def downgrade(revision, engine=None):
    """Downgrade the database to ``revision`` (``base``: no tables)."""
    _run(command.downgrade, revision, engine=engine)


def version(engine=None):
    """The current revision, or None for an empty database."""
    with (engine or session.get_engine()).connect() as connection:
        return alembic_migration.MigrationContext.configure(
            connection
        ).get_current_revision()
