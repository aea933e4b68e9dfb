"""alembic environment of heat_lite (run by heat_lite.db.migration)."""

from alembic import context

from heat_lite.db import models

config = context.config
# Only ``alembic revision --autogenerate`` reads the metadata: a plain
# upgrade (every first start of heat-lite-all) does not import taskflow
# for the definitions of its tables.
if getattr(config.cmd_opts, "autogenerate", False):
    TARGET_METADATA = models.full_metadata()
else:
    TARGET_METADATA = models.BASE.metadata


def run_migrations_online():
    connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=TARGET_METADATA,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
