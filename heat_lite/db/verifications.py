"""Queries of verified updates: one ``verification`` row per traversal
that carries a ``verify`` document (see ``engine.traversal.verify``).

Each step is a conditional write, so that any number of engines may poll
the same verification and exactly one of them decides it: the start
(``started_at`` set once), a signalled verdict (set once, only while the
verification runs) and the result (PASS / FAIL, set once).
"""

import json

from heat_lite.db import api as db_api
from heat_lite.db import models
from heat_lite.db.session import transaction

VERIFICATION = models.Verification.__table__


def verification_insert(session, traversal, stack_id, spec):
    """Store the ``verify`` document of a new traversal (inside the
    transaction that starts it)."""
    session.execute(
        VERIFICATION.insert().values(
            traversal_id=traversal,
            stack_id=stack_id,
            spec=json.dumps(spec),
            created_at=models.utcnow(),
        )
    )


def _decoded(row):
    if row is None:
        return None
    row = dict(row._mapping)
    row["spec"] = json.loads(row["spec"])
    row["verdict"] = json.loads(row["verdict"]) if row["verdict"] else None
    return row


def verification_get(traversal):
    """The verification of ``traversal`` (spec and verdict decoded), or
    None if the traversal carries none."""
    with transaction(writer=False) as session:
        return _decoded(
            session.execute(
                VERIFICATION.select().where(
                    VERIFICATION.c.traversal_id == traversal
                )
            ).first()
        )


def verification_start(stack_id, traversal, stack_values, event):
    """Start the checks' clock once, and say so on the stack.

    :returns: False if ``traversal`` is no longer the stack's current one
        (nothing written), else True (also when it had started before).
    """
    with transaction() as session:
        started = session.execute(
            VERIFICATION.update()
            .where(
                VERIFICATION.c.traversal_id == traversal,
                VERIFICATION.c.started_at.is_(None),
            )
            .values(started_at=models.utcnow())
        )
        if started.rowcount != 1:
            return True
        if not db_api.stack_update_if_traversal(
            session, stack_id, traversal, stack_values
        ):
            session.rollback()
            return False
        db_api.event_insert(session, event)
        return True


def verification_signal(traversal, status, reason):
    """Record a signalled verdict while the verification runs.

    :returns: False if it is not running (not started, decided, or a
        verdict was given already).
    """
    with transaction() as session:
        result = session.execute(
            VERIFICATION.update()
            .where(
                VERIFICATION.c.traversal_id == traversal,
                VERIFICATION.c.started_at.is_not(None),
                VERIFICATION.c.result.is_(None),
                VERIFICATION.c.verdict.is_(None),
            )
            .values(verdict=json.dumps({"status": status, "reason": reason}))
        )
        return result.rowcount == 1


def verification_decide(
    stack_id, traversal, result, reason, stack_values, event
):
    """Decide the verification once: PASS or FAIL with ``reason``; on
    PASS also set ``stack_values`` and write ``event`` (a FAIL is
    written by the stack's failure that follows).

    :returns: True if this call decided it.
    """
    with transaction() as session:
        decided = session.execute(
            VERIFICATION.update()
            .where(
                VERIFICATION.c.traversal_id == traversal,
                VERIFICATION.c.result.is_(None),
            )
            .values(result=result, reason=reason, finished_at=models.utcnow())
        )
        if decided.rowcount != 1:
            return False
        if stack_values and not db_api.stack_update_if_traversal(
            session, stack_id, traversal, stack_values
        ):
            session.rollback()
            return False
        if event:
            db_api.event_insert(session, event)
        return True


def verifications_of_stack(stack_id):
    """Every verification of a stack, oldest first (spec decoded)."""
    with transaction(writer=False) as session:
        rows = session.execute(
            VERIFICATION.select()
            .where(VERIFICATION.c.stack_id == stack_id)
            .order_by(VERIFICATION.c.created_at)
        )
        return [_decoded(r) for r in rows]
