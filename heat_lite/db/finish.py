"""The finish of a node: its record, its events and its successors' sync
points written in one transaction, the way the configured database does
it in the fewest round trips (``db.dialects``)."""

from heat_lite.db import dialects
from heat_lite.db.session import retry_write, transaction


@retry_write
def resource_finish(
    record_id,
    atomic_key,
    owner,
    values,
    events,
    traversal,
    phase,
    successors,
    taker=None,
    handing=None,
):
    """Finish a node in one transaction.

    Writes ``values`` to the record (releasing the lock held by ``owner``
    = (engine_id, epoch), or guarding on ``atomic_key`` when it was never
    locked: ``owner`` None),
    inserts ``events`` and decrements the sync points of ``successors``
    (entity ids in ``phase``; an empty list means the phase's join).
    With a ``taker`` (see ``locks.resources_take``), the successors that
    fired (at most ``taker.limit``) are read and taken in the same
    transaction; ``taker.result`` holds them once it committed. A
    ``handing`` list gets, for the nodes the finish makes ready, the
    record as the finish left it where the finish returns it
    (PostgreSQL's one statement), else its id alone (``{"id":
    record_id}``: they read it along with their own record,
    ``records.node_load``).

    :returns: (fired entity ids, superseded) where superseded means the
        traversal's sync points are gone.
    :raises ConcurrentTransaction: if the lock or atomic_key was lost.
    """
    if taker is not None:
        taker.result = []
    finish = dialects.Finish(
        record_id,
        atomic_key,
        owner,
        values,
        events,
        traversal,
        phase,
        successors,
        taker,
        handing,
    )
    writes: dialects.Writes = dialects.writes()
    single = writes.finish_is_one_statement(finish)
    with transaction(single=single) as session:
        fired, found = writes.finish(session, finish)
    if not successors:
        return ([(0, finish.phase)] if fired else []), not found
    return [(e, phase) for e in fired], not found
