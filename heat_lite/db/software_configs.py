"""Queries on software configs (``/software_configs``, the configs of
``OS::Heat::SoftwareConfig``).

A config is immutable: it is inserted, read, listed and deleted, never
updated. Every query is scoped to a project (``tenant``); a config of
another project is "not found", never "forbidden".
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.db import api, models
from heat_lite.db.session import retry_read, transaction

CONFIG = models.SoftwareConfig.__table__
DEPLOYMENT = models.SoftwareDeployment.__table__
# The parts of a config kept together in its ``config`` column.
BODY_KEYS = ("config", "options", "inputs", "outputs")


def _config(row):
    row = api._row(row)
    body = json.loads(row.pop("config") or "{}")
    row.update({key: body.get(key) for key in BODY_KEYS})
    return row


def _not_found(config_id):
    return exception.EntityNotFound(entity="Software Config", name=config_id)


def software_config_create(values):
    """Store a config.

    :param values: ``id, tenant, name, group`` and the ``BODY_KEYS``.
    :returns: the stored config as ``software_config_get`` returns it.
    """
    row = {key: values.get(key) for key in ("id", "tenant", "name", "group")}
    row["config"] = json.dumps({key: values.get(key) for key in BODY_KEYS})
    row["created_at"] = models.utcnow()
    with transaction() as session:
        session.execute(CONFIG.insert().values(**row))
    return software_config_get(values["id"], values["tenant"])


@retry_read
def software_config_get(config_id, tenant):
    """Return {id, tenant, name, group, created_at, updated_at, config,
    options, inputs, outputs}.

    :raises EntityNotFound: if there is no such config in ``tenant``.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            CONFIG.select().where(
                CONFIG.c.id == config_id, CONFIG.c.tenant == tenant
            )
        ).first()
    if row is None:
        raise _not_found(config_id)
    return _config(row)


@retry_read
def software_config_get_all(tenant, limit=None, marker=None):
    """The configs of ``tenant``, oldest first, as summaries (``id, name,
    group, created_at``).

    :param marker: id of the last config of the previous page.
    :raises Invalid: for a marker that is not a config of ``tenant``.
    """
    columns = [CONFIG.c.created_at, CONFIG.c.id]
    query = (
        CONFIG.select()
        .with_only_columns(
            CONFIG.c.id, CONFIG.c.name, CONFIG.c.group, CONFIG.c.created_at
        )
        .where(CONFIG.c.tenant == tenant)
    )
    with transaction(writer=False) as session:
        if marker:
            ref = session.execute(
                CONFIG.select().where(
                    CONFIG.c.id == marker, CONFIG.c.tenant == tenant
                )
            ).first()
            if ref is None:
                raise exception.Invalid(message="Invalid marker: %s" % marker)
            query = query.where(api._after(ref, columns, "asc"))
        query = query.order_by(*columns)
        if limit is not None:
            query = query.limit(limit)
        return [api._row(r) for r in session.execute(query)]


def software_config_delete(config_id, tenant):
    """Delete a config that no deployment uses.

    :raises EntityNotFound: if there is no such config in ``tenant``.
    :raises InvalidRestrictedAction: if a deployment uses it (as Heat).
    """
    used = (
        sa.select(DEPLOYMENT.c.id)
        .where(DEPLOYMENT.c.config_id == config_id)
        .exists()
    )
    mine = (CONFIG.c.id == config_id, CONFIG.c.tenant == tenant)
    with transaction() as session:
        deleted = session.execute(CONFIG.delete().where(*mine, ~used)).rowcount
        if (
            not deleted
            and session.execute(sa.select(CONFIG.c.id).where(*mine)).first()
        ):
            raise exception.InvalidRestrictedAction(
                message="Software config with id %s can not be deleted "
                "as it is referenced." % config_id
            )
    if not deleted:
        raise _not_found(config_id)
