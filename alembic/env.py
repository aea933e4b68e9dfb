"""alembic environment of heat_lite (run by heat_lite.db.migration)."""

from alembic import context

from heat_lite.db import models

config = context.config


def run_migrations_online():
    connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=models.BASE.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
