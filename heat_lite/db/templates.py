"""Stored templates (``raw_template``): a stack's template, environment
and files, one row per version the stack went through."""

import json

from heat_lite.common import exception
from heat_lite.db import models
from heat_lite.db.session import as_dict, retry_read, transaction

TEMPLATE = models.RawTemplate.__table__


def raw_template_insert(session, stack_id, template, environment, files):
    """Insert a template inside a running transaction; return its id."""
    result = session.execute(
        TEMPLATE.insert().values(
            stack_id=stack_id,
            template=json.dumps(template),
            environment=json.dumps(environment),
            files=json.dumps(files),
            created_at=models.utcnow(),
        )
    )
    return result.inserted_primary_key[0]


@retry_read
def raw_template_get(template_id):
    """Return {id, template, environment, files} with JSON decoded.

    :raises NotFound: if there is no such template.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            TEMPLATE.select().where(TEMPLATE.c.id == template_id)
        ).first()
    if row is None:
        raise exception.NotFound(message="Template %s not found" % template_id)
    row = as_dict(row)
    for key in ("template", "environment", "files"):
        row[key] = json.loads(row[key])
    return row
