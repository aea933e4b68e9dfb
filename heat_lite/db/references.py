"""Reads of ``GET /references`` (``engine.endpoint.references``): the
resource records of one type across a project's live stacks, and the
stacks whose last COMPLETE template is not their goal.

One statement each, whatever the number of stacks: the records come
with their role (``current`` or ``replaced``) and their stored
properties (``properties_data``); a ``LIKE`` on the property's key cuts
the records whose properties cannot hold it before they are decoded.
"""

import sqlalchemy as sa

from heat_lite.db import models
from heat_lite.db.session import retry_read, transaction

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__


def _live(tenant):
    clause = STACK.c.deleted_at.is_(None)
    if tenant is not None:
        clause = sa.and_(clause, STACK.c.tenant == tenant)
    return clause


@retry_read
def property_records(tenant, type_name, key_like):
    """[(stack id, role, properties_data)] of the records of
    ``type_name`` (current or replaced, not deleted) in the live stacks
    of ``tenant`` (None: every project), whose properties text is
    ``LIKE key_like``."""
    query = (
        sa.select(
            RESOURCE.c.stack_id, RESOURCE.c.role, RESOURCE.c.properties_data
        )
        .select_from(RESOURCE.join(STACK, STACK.c.id == RESOURCE.c.stack_id))
        .where(
            _live(tenant),
            RESOURCE.c.type == type_name,
            RESOURCE.c.role.in_(("current", "replaced")),
            sa.not_(
                sa.and_(
                    RESOURCE.c.action == "DELETE",
                    RESOURCE.c.status == "COMPLETE",
                )
            ),
            RESOURCE.c.properties_data.like(key_like, escape="\\"),
        )
    )
    with transaction(writer=False) as session:
        return [tuple(r) for r in session.execute(query)]


@retry_read
def stacks_off_their_rollback_template(tenant):
    """The live stacks (of ``tenant``, None: all) whose last COMPLETE
    template is not their goal: an update or its rollback runs, or
    failed. Their rollback template may hold other values."""
    query = STACK.select().where(
        _live(tenant),
        STACK.c.prev_raw_template_id.is_not(None),
        STACK.c.prev_raw_template_id != STACK.c.raw_template_id,
    )
    with transaction(writer=False) as session:
        return [dict(r._mapping) for r in session.execute(query)]
