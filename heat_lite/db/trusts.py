"""The trust a stack's resources act through (``stack.trust_id``, see
``heat_lite.engine.trusts``): read along the owner chain, set once."""

import sqlalchemy as sa

from heat_lite.db import models
from heat_lite.db.session import retry_read, transaction

STACK = models.Stack.__table__


@retry_read
def stack_trust(stack_id):
    """The stored trust of ``stack_id``, else of its nearest owner that
    has one (a nested stack made before its root got a trust).

    :returns: the stored value, or None.
    """
    seen = set()
    with transaction(writer=False) as session:
        while stack_id and stack_id not in seen:
            seen.add(stack_id)
            row = session.execute(
                sa.select(STACK.c.trust_id, STACK.c.owner_id).where(
                    STACK.c.id == stack_id
                )
            ).first()
            if row is None:
                return None
            if row.trust_id:
                return row.trust_id
            stack_id = row.owner_id
    return None


def stack_trust_set(stack_id, stored):
    """Give ``stack_id`` the trust ``stored`` unless it has one.

    :returns: False if it already had one (the new one is not kept).
    """
    with transaction() as session:
        result = session.execute(
            STACK.update()
            .where(STACK.c.id == stack_id, STACK.c.trust_id.is_(None))
            .values(trust_id=stored)
        )
        return result.rowcount == 1
