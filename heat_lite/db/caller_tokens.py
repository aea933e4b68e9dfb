"""Reading the caller's token kept with a traversal (``traversal.
caller_token``, encrypted by ``heat_lite.engine.worker.caller``).

``convergence.traversal_begin`` writes it in the traversal's row, and it is
deleted with that row when the traversal is replaced or its stack finishes.
Only plugins that act as the caller read it, so none of this is on the path
of an ordinary resource.
"""

import sqlalchemy as sa

from heat_lite.db import models
from heat_lite.db.session import transaction

STACK = models.Stack.__table__
TRAVERSAL = models.Traversal.__table__


def traversal_token(traversal_id):
    """The encrypted token kept with ``traversal_id``, or None."""
    with transaction(writer=False) as session:
        return session.execute(
            sa.select(TRAVERSAL.c.caller_token).where(
                TRAVERSAL.c.id == traversal_id
            )
        ).scalar()


def operation_token(stack_id, traversal_id):
    """The encrypted token an operation on ``stack_id`` acts with.

    The token of ``traversal_id`` if it has one; else, for a nested stack
    (whose operations the engine starts for its parent resource), the
    token of the current traversal of the nearest owner stack that has one.

    :returns: the encrypted token, or None.
    """
    with transaction(writer=False) as session:
        token = session.execute(
            sa.select(TRAVERSAL.c.caller_token).where(
                TRAVERSAL.c.id == traversal_id
            )
        ).scalar()
        if token is not None:
            return token
        owner = session.execute(
            sa.select(STACK.c.owner_id).where(STACK.c.id == stack_id)
        ).scalar()
        seen = {stack_id}
        while token is None and owner and owner not in seen:
            seen.add(owner)
            row = session.execute(
                sa.select(STACK.c.owner_id, TRAVERSAL.c.caller_token)
                .select_from(
                    STACK.outerjoin(
                        TRAVERSAL, TRAVERSAL.c.id == STACK.c.current_traversal
                    )
                )
                .where(STACK.c.id == owner)
            ).first()
            if row is None:
                return None
            owner, token = row.owner_id, row.caller_token
        return token
