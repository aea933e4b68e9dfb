"""A project's default image retention (``retention_default``, issue 30
item 2, doc/specs/image_retention.md): any of keep_last, grace, mode, for
the project's apps that leave them out of their own ``retention``.

One row per project that set one; a key the project did not set is
NULL. Values arrive checked (``app_spec.check_retention``). The pass
reads every project's default in one query (``retention_defaults``).
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.db import models
from heat_lite.db.session import retry_read, retry_write, transaction

DEFAULT = models.RetentionDefault.__table__
KEYS = ("keep_last", "grace", "mode")


def _own(row):
    """The keys the project set (NULL columns left out)."""
    return {k: row[k] for k in KEYS if row[k] is not None}


@retry_read
def retention_default_get(tenant):
    """:returns: {"retention": {keys set}, "updated_at": datetime}.
    :raises RetentionDefaultNotFound: if the project set none."""
    with transaction(writer=False) as conn:
        row = conn.execute(
            DEFAULT.select().where(DEFAULT.c.tenant == tenant)
        ).first()
    if row is None:
        raise exception.RetentionDefaultNotFound(project=tenant)
    row = row._mapping
    return {"retention": _own(row), "updated_at": row["updated_at"]}


@retry_read
def retention_defaults(tenant=None):
    """Every project's default (or only ``tenant``'s), in one query.

    :returns: {tenant: {keys set}}; a project without one is absent.
    """
    query = DEFAULT.select()
    if tenant is not None:
        query = query.where(DEFAULT.c.tenant == tenant)
    with transaction(writer=False) as conn:
        return {r.tenant: _own(r._mapping) for r in conn.execute(query)}


@retry_write
def retention_default_set(tenant, values):
    """Make ``values`` (checked; a key left out is unset) the project's
    whole default, replacing any before.

    :returns: as ``retention_default_get``.
    """
    row = dict({k: values.get(k) for k in KEYS}, updated_at=models.utcnow())
    with transaction() as conn:
        done = conn.execute(
            DEFAULT.update().where(DEFAULT.c.tenant == tenant).values(**row)
        ).rowcount
    if not done:
        try:
            with transaction() as conn:
                conn.execute(DEFAULT.insert().values(tenant=tenant, **row))
        except db_exc.DBDuplicateEntry:
            # Another set inserted it first: this one is the later, so
            # it overwrites.
            with transaction() as conn:
                conn.execute(
                    DEFAULT.update()
                    .where(DEFAULT.c.tenant == tenant)
                    .values(**row)
                )
    return retention_default_get(tenant)


@retry_write
def retention_default_delete(tenant):
    """Unset the project's default: its apps follow the options.

    :raises RetentionDefaultNotFound: if the project set none.
    """
    with transaction() as conn:
        gone = conn.execute(
            sa.delete(DEFAULT).where(DEFAULT.c.tenant == tenant)
        ).rowcount
    if not gone:
        raise exception.RetentionDefaultNotFound(project=tenant)
