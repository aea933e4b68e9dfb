"""Queries on software deployments (``/software_deployments``): a
config applied to one server, with what the server reported back.

A deployment is visible to the project that made it (``tenant``) and to
its ``stack_user_project_id`` (the project a server's agent works in),
as in Heat; to any other project it is "not found". Its config must be
one of the creating project's configs: an unknown one is refused as bad
input, and a config in use by a deployment cannot be deleted
(``software_configs.software_config_delete``).
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.db import models, software_configs
from heat_lite.db.session import as_dict, retry_read, transaction

DEPLOYMENT = models.SoftwareDeployment.__table__
CONFIG = models.SoftwareConfig.__table__
# Kept as JSON documents.
JSON_KEYS = ("input_values", "output_values")


def _deployment(row):
    row = as_dict(row)
    for key in JSON_KEYS:
        if row[key] is not None:
            row[key] = json.loads(row[key])
    return row


def _not_found(deployment_id):
    return exception.NotFound(
        message="Deployment with id %s not found" % deployment_id
    )


def _visible(project):
    return sa.or_(
        DEPLOYMENT.c.tenant == project,
        DEPLOYMENT.c.stack_user_project_id == project,
    )


def _columns(values):
    row = {key: values[key] for key in values if key in DEPLOYMENT.c}
    for key in JSON_KEYS:
        if key in row and row[key] is not None:
            row[key] = json.dumps(row[key])
    return row


def _check_config(session, config_id, tenant):
    found = session.execute(
        sa.select(CONFIG.c.id).where(
            CONFIG.c.id == config_id, CONFIG.c.tenant == tenant
        )
    ).first()
    if found is None:
        raise exception.Invalid(
            message="Config with id %s not found" % config_id
        )


def software_deployment_create(values):
    """Store a deployment.

    :param values: ``id, tenant, config_id, server_id`` and optionally
        ``input_values, output_values, action, status, status_reason,
        stack_user_project_id``.
    :returns: the deployment as ``software_deployment_get`` returns it.
    :raises Invalid: if ``config_id`` is not a config of ``tenant``.
    """
    row = _columns(values)
    row["created_at"] = models.utcnow()
    with transaction() as session:
        _check_config(session, row["config_id"], row["tenant"])
        session.execute(DEPLOYMENT.insert().values(**row))
    return software_deployment_get(values["id"], values["tenant"])


@retry_read
def software_deployment_get(deployment_id, project):
    """Return the deployment's columns (``input_values`` and
    ``output_values`` decoded).

    :raises NotFound: if ``project`` sees no such deployment.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            DEPLOYMENT.select().where(
                DEPLOYMENT.c.id == deployment_id, _visible(project)
            )
        ).first()
    if row is None:
        raise _not_found(deployment_id)
    return _deployment(row)


@retry_read
def software_deployment_get_all(project, server_id=None):
    """The deployments ``project`` sees (of ``server_id`` only, when
    given), oldest first."""
    query = DEPLOYMENT.select().where(_visible(project))
    if server_id:
        query = query.where(DEPLOYMENT.c.server_id == server_id)
    query = query.order_by(DEPLOYMENT.c.created_at, DEPLOYMENT.c.id)
    with transaction(writer=False) as session:
        return [_deployment(r) for r in session.execute(query)]


@retry_read
def software_deployment_configs(project, server_id):
    """The configs of the deployments of ``server_id`` that ``project``
    sees, as ``software_configs.software_config_get`` returns them,
    ordered by config name (as Heat orders a server's metadata, so that
    a template controls the order by naming its configs), then by when
    their deployment was made.
    """
    query = (
        sa.select(CONFIG)
        .select_from(
            DEPLOYMENT.join(CONFIG, CONFIG.c.id == DEPLOYMENT.c.config_id)
        )
        .where(DEPLOYMENT.c.server_id == server_id, _visible(project))
        .order_by(DEPLOYMENT.c.created_at, DEPLOYMENT.c.id)
    )
    with transaction(writer=False) as session:
        configs = [software_configs._config(r) for r in session.execute(query)]
    # Sorted here: a NULL name sorts first on every database.
    return sorted(configs, key=lambda c: c["name"] or "")


def software_deployment_update(deployment_id, project, values):
    """Change the deployment's columns given in ``values`` (among
    ``config_id, input_values, output_values, action, status,
    status_reason, updated_at``).

    :returns: the deployment after the change.
    :raises NotFound: if ``project`` sees no such deployment.
    :raises Invalid: for a ``config_id`` that is not a config of the
        deployment's project.
    """
    row = _columns(values)
    where = (DEPLOYMENT.c.id == deployment_id, _visible(project))
    with transaction() as session:
        tenant = session.execute(
            sa.select(DEPLOYMENT.c.tenant).where(*where)
        ).scalar()
        if tenant is None:
            raise _not_found(deployment_id)
        if row.get("config_id"):
            _check_config(session, row["config_id"], tenant)
        if row:
            session.execute(DEPLOYMENT.update().where(*where).values(**row))
    return software_deployment_get(deployment_id, project)


def software_deployment_delete(deployment_id, project):
    """Delete a deployment; return it as it was.

    :raises NotFound: if ``project`` sees no such deployment.
    """
    where = (DEPLOYMENT.c.id == deployment_id, _visible(project))
    with transaction() as session:
        row = session.execute(DEPLOYMENT.select().where(*where)).first()
        if row is None:
            raise _not_found(deployment_id)
        session.execute(DEPLOYMENT.delete().where(*where))
    return _deployment(row)
