"""Re-drives of stalled nodes, counted in their sync point
(``sync_point.redrives`` and ``redriven_at``).

Every engine's watchdog may find the same stalled node; claiming a
re-drive is a conditional write on the count it read, so each round is
taken by one engine only and the cap holds across the whole deployment.
A new traversal has new sync points, so its nodes start from zero.
"""

import sqlalchemy as sa

from heat_lite.db import models
from heat_lite.db.session import transaction

SYNC = models.SyncPoint.__table__
RESOURCE = models.Resource.__table__


def redrive_state(traversal):
    """The re-drive count of every ready node of ``traversal``.

    :returns: {(entity_id, phase): (redrives, redriven_at, hook)} where
        ``hook`` is the record's breakpoint mark (or None).
    """
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(
                SYNC.c.entity_id,
                SYNC.c.phase,
                SYNC.c.redrives,
                SYNC.c.redriven_at,
                RESOURCE.c.hook,
            )
            .select_from(
                SYNC.outerjoin(RESOURCE, RESOURCE.c.id == SYNC.c.entity_id)
            )
            .where(SYNC.c.traversal_id == traversal, SYNC.c.remaining == 0)
        )
        return {
            (r.entity_id, r.phase): (r.redrives, r.redriven_at, r.hook)
            for r in rows
        }


def redrive_claim(traversal, entity_id, phase, seen, now, counted=True):
    """Count one more re-drive of a node if its count is still ``seen``
    (with ``counted`` False, only its time: a node waiting at a hook).

    :returns: True if this caller claimed it (and so re-drives it).
    """
    with transaction() as session:
        result = session.execute(
            SYNC.update()
            .where(
                SYNC.c.traversal_id == traversal,
                SYNC.c.entity_id == entity_id,
                SYNC.c.phase == phase,
                SYNC.c.redrives == seen,
            )
            .values(redrives=seen + int(counted), redriven_at=now)
        )
        return result.rowcount == 1
