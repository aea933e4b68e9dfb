"""Reads of stack queries (``POST /stacks/query``,
``engine.endpoint.queries``).

The database narrows first, with what an index or a cheap predicate can
do -- live top-level stacks of the project, ``LIKE`` prefixes of the name
and tag patterns, the exact statuses -- and the engine checks the exact
shell patterns in Python on what is left. Each read is one statement per
500 candidate stacks, whatever the number of resources.
"""

import sqlalchemy as sa

from heat_lite.common.states import Action
from heat_lite.db import models
from heat_lite.db.session import transaction

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
TEMPLATE = models.RawTemplate.__table__
_CHUNK = 500


def _chunks(items):
    items = list(items)
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def stack_candidates(tenant, name_like=None, statuses=None, tag_likes=()):
    """Live top-level stacks that may match, ordered by name and id.

    :param tenant: the project, or None for every project.
    :param name_like: a ``LIKE`` pattern (``\\`` escapes) of the name.
    :param statuses: [(action, status)] the stack must be in one of.
    :param tag_likes: ``LIKE`` patterns the JSON ``tags`` text must all
        match.
    :returns: [{id, name, tenant, action, status, tags, raw_template_id}]
    """
    query = sa.select(
        STACK.c.id,
        STACK.c.name,
        STACK.c.tenant,
        STACK.c.action,
        STACK.c.status,
        STACK.c.tags,
        STACK.c.raw_template_id,
    ).where(STACK.c.deleted_at.is_(None), STACK.c.owner_id.is_(None))
    if tenant is not None:
        query = query.where(STACK.c.tenant == tenant)
    if name_like is not None:
        query = query.where(STACK.c.name.like(name_like, escape="\\"))
    if statuses:
        query = query.where(
            sa.or_(
                *(
                    sa.and_(STACK.c.action == a, STACK.c.status == s)
                    for a, s in sorted(set(statuses))
                )
            )
        )
    for like in tag_likes:
        query = query.where(STACK.c.tags.like(like, escape="\\"))
    query = query.order_by(STACK.c.name, STACK.c.id)
    with transaction(writer=False) as session:
        return [dict(r._mapping) for r in session.execute(query)]


def templates_of(template_ids, with_template=False):
    """{raw_template id: (environment text, template text or None)}."""
    columns = [TEMPLATE.c.id, TEMPLATE.c.environment]
    if with_template:
        columns.append(TEMPLATE.c.template)
    found = {}
    with transaction(writer=False) as session:
        for chunk in _chunks(sorted(set(template_ids))):
            rows = session.execute(
                sa.select(*columns).where(TEMPLATE.c.id.in_(chunk))
            )
            for row in rows:
                found[row.id] = (
                    row.environment,
                    row.template if with_template else None,
                )
    return found


def current_resources(stack_ids, type_likes=None):
    """The current, not deleted, records of stacks: {stack id: [{name,
    type, properties_data}]}, records of types matching one of
    ``type_likes`` (``LIKE`` patterns) only, if given."""
    found = {}
    with transaction(writer=False) as session:
        for chunk in _chunks(stack_ids):
            query = sa.select(
                RESOURCE.c.stack_id,
                RESOURCE.c.name,
                RESOURCE.c.type,
                RESOURCE.c.properties_data,
            ).where(
                RESOURCE.c.stack_id.in_(chunk),
                RESOURCE.c.role == "current",
                RESOURCE.c.action != Action.DELETE,
            )
            if type_likes:
                query = query.where(
                    sa.or_(
                        *(
                            RESOURCE.c.type.like(t, escape="\\")
                            for t in sorted(set(type_likes))
                        )
                    )
                )
            for row in session.execute(query.order_by(RESOURCE.c.name)):
                found.setdefault(row.stack_id, []).append(
                    {
                        "name": row.name,
                        "type": row.type,
                        "properties_data": row.properties_data,
                    }
                )
    return found
