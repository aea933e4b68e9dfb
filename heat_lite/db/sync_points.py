"""Sync points: per traversal, the predecessors each node still waits
for.

A traversal stores one row per node (and per join: entity 0 in the
``barrier`` or ``stack`` phase) with the count of its predecessors; each
finish decrements the rows of its successors, and the transaction whose
decrement reaches zero fires that node. The decrement is part of a
node's finish (``db.finish``), written as each dialect does it best
(``db.dialects``).
"""

import sqlalchemy as sa

from heat_lite.db import models, statements
from heat_lite.db.session import retry_read, transaction

RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__

# The phases of the joins: the end of the update phase, and of the stack.
BARRIER = "barrier"
STACK_PHASE = "stack"


def insert_sync_points(session, stack_id, traversal, counts):
    """Store a traversal's sync points inside a running transaction.

    :param counts: {(entity_id, phase): predecessors to wait for}.
    """
    now = models.utcnow()
    rows = [
        {
            "traversal_id": traversal,
            "entity_id": entity,
            "phase": phase,
            "stack_id": stack_id,
            "remaining": remaining,
            "created_at": now,
        }
        for (entity, phase), remaining in counts.items()
    ]
    for chunk in statements.chunks(rows):
        session.execute(SYNC.insert(), chunk)


@retry_read
def sync_point_remaining(traversal, entity_id, phase):
    """The predecessors a node still waits for; None if it has no row."""
    with transaction(writer=False) as session:
        return session.execute(
            sa.select(SYNC.c.remaining).where(
                SYNC.c.traversal_id == traversal,
                SYNC.c.entity_id == entity_id,
                SYNC.c.phase == phase,
            )
        ).scalar()


@retry_read
def ready_nodes(traversal):
    """Nodes of ``traversal`` that are ready but neither done nor locked.

    An update node whose record was replaced in this traversal counts as
    done when its replacement converged; the caller follows that chain.

    :returns: [(entity_id, phase, replaced_by)] including the joins
        (entity 0).
    """
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(
                SYNC.c.entity_id,
                SYNC.c.phase,
                RESOURCE.c.converged_traversal,
                RESOURCE.c.engine_id,
                RESOURCE.c.replaced_by,
            )
            .select_from(
                SYNC.outerjoin(RESOURCE, RESOURCE.c.id == SYNC.c.entity_id)
            )
            .where(SYNC.c.traversal_id == traversal, SYNC.c.remaining == 0)
        )
        ready = []
        for row in rows:
            if row.phase in (BARRIER, STACK_PHASE):
                ready.append((0, row.phase, None))
            elif row.engine_id is None and (
                row.converged_traversal != traversal
                or row.replaced_by is not None
            ):
                ready.append((row.entity_id, row.phase, row.replaced_by))
        return ready
