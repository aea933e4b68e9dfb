"""The traversal log: each stack's traversals, queued, running and
finished (``models.TraversalLog``, doc/specs/update_semantics.md).

A traversal's row is written in the transaction that starts it (an
INSERT, or for a queued update the conditional QUEUED -> RUNNING that
makes it run at most once) and in the one that finishes it (its final
state, then the oldest finished rows beyond ``[engine]
max_traversal_history`` are trimmed). A start that takes a running stack
over marks the running one SUPERSEDED (or FAILED / CANCELLED for the
rollback of a failure or a cancel) with the id of its successor.
Updates queued behind a running operation (a stack whose update
semantics is ``queue``) wait here as QUEUED rows holding their goal.
"""

import json

import sqlalchemy as sa

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import TRAVERSAL as T
from heat_lite.db import models
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction

CONF = conf.CONF
LOG_TABLE = models.TraversalLog.__table__
STACK = models.Stack.__table__
# What a listing shows (the request and the token stay inside).
_SHOWN = tuple(
    c for c in LOG_TABLE.c if c.name not in ("request", "caller_token")
)


# Inside the start and the finish of a traversal ------------------------------
def log_start(session, stack_id, traversal, log):
    """Record that ``traversal`` starts, in the caller's transaction.

    :param log: {"action", "requested_by", "queued" (it was a QUEUED
        row: flip it), "previous" (the traversal it takes the stack from
        while that one runs, or None), "previous_state" (what that one
        becomes: SUPERSEDED, FAILED or CANCELLED)}.
    :raises ConcurrentTransaction: a queued traversal that is no longer
        QUEUED (started or cancelled by someone else).
    """
    now = models.utcnow()
    if log.get("queued"):
        result = session.execute(
            LOG_TABLE.update()
            .where(LOG_TABLE.c.id == traversal, LOG_TABLE.c.state == T.QUEUED)
            .values(
                state=T.RUNNING,
                started_at=now,
                request=None,
                caller_token=None,
            )
        )
        if result.rowcount != 1:
            raise exception.ConcurrentTransaction(what="queued %s" % traversal)
    else:
        session.execute(
            LOG_TABLE.insert().values(
                id=traversal,
                stack_id=stack_id,
                action=log["action"],
                state=T.RUNNING,
                requested_by=log.get("requested_by"),
                created_at=now,
                started_at=now,
            )
        )
    if log.get("previous"):
        session.execute(
            LOG_TABLE.update()
            .where(
                LOG_TABLE.c.id == log["previous"],
                LOG_TABLE.c.state == T.RUNNING,
            )
            .values(
                state=log.get("previous_state") or T.SUPERSEDED,
                superseded_by=traversal,
                finished_at=now,
            )
        )


def log_finish(session, stack_id, traversal, state, reason, delete=False):
    """Record the end of ``traversal`` (in the caller's transaction) and
    trim the stack's history; a delete cancels what is still queued."""
    now = models.utcnow()
    session.execute(
        LOG_TABLE.update()
        .where(LOG_TABLE.c.id == traversal, LOG_TABLE.c.state == T.RUNNING)
        .values(state=state, status_reason=reason, finished_at=now)
    )
    if delete:
        _cancel_queued(session, stack_id, "Stack deleted")
    _trim(session, stack_id, CONF.engine.max_traversal_history)


def _trim(session, stack_id, keep):
    """Delete the finished rows older than the newest ``keep``: one
    SELECT, and a DELETE only when there is something to delete (MySQL
    cannot LIMIT a subquery of the table it deletes from)."""
    finished = sa.and_(
        LOG_TABLE.c.stack_id == stack_id, LOG_TABLE.c.state.in_(T.FINISHED)
    )
    oldest_kept = session.execute(
        sa.select(LOG_TABLE.c.seq)
        .where(finished)
        .order_by(LOG_TABLE.c.seq.desc())
        .limit(1)
        .offset(keep)
    ).scalar()
    if oldest_kept is not None:
        session.execute(
            LOG_TABLE.delete().where(finished, LOG_TABLE.c.seq <= oldest_kept)
        )


# The queue -------------------------------------------------------------------
@retry_write
def queue_add(stack_id, traversal, requested_by, request, caller_token, limit):
    """Queue an update of ``stack_id`` (its goal, JSON-serializable, in
    ``request``) as traversal ``traversal``.

    The transaction first writes the stack's row (a write that changes
    nothing): concurrent submissions to one stack take turns on its row
    lock, so each counts the others' rows and the bound is exact.

    :returns: its position in the queue (1: next).
    :raises UpdateQueueFull: if ``limit`` updates already wait.
    :raises StackNotFound: if the stack was deleted.
    """
    with transaction() as session:
        turn = session.execute(
            STACK.update()
            .where(STACK.c.id == stack_id, STACK.c.deleted_at.is_(None))
            .values(update_semantics=STACK.c.update_semantics)
        )
        if turn.rowcount != 1:
            raise exception.StackNotFound(name=stack_id)
        waiting = session.execute(
            sa.select(sa.func.count())
            .select_from(LOG_TABLE)
            .where(
                LOG_TABLE.c.stack_id == stack_id,
                LOG_TABLE.c.state == T.QUEUED,
            )
        ).scalar()
        if waiting >= limit:
            raise exception.UpdateQueueFull(stack_name=stack_id, count=waiting)
        session.execute(
            LOG_TABLE.insert().values(
                id=traversal,
                stack_id=stack_id,
                action="UPDATE",
                state=T.QUEUED,
                requested_by=requested_by,
                request=json.dumps(request),
                caller_token=caller_token,
                created_at=models.utcnow(),
            )
        )
        return waiting + 1


@retry_read
def queue_next(stack_id):
    """The oldest QUEUED row of the stack (``request`` decoded), or None."""
    with transaction(writer=False) as session:
        row = as_dict(
            session.execute(
                LOG_TABLE.select()
                .where(
                    LOG_TABLE.c.stack_id == stack_id,
                    LOG_TABLE.c.state == T.QUEUED,
                )
                .order_by(LOG_TABLE.c.seq)
                .limit(1)
            ).first()
        )
    if row is not None:
        row["request"] = json.loads(row["request"])
    return row


@retry_write
def queue_cancel(stack_id, traversal, reason):
    """Cancel a QUEUED traversal.

    :returns: True if it was QUEUED (and is now CANCELLED).
    """
    with transaction() as session:
        return _cancel_queued(session, stack_id, reason, traversal) == 1


def _cancel_queued(session, stack_id, reason, traversal=None):
    """CANCEL the stack's QUEUED rows (only ``traversal``, if given),
    forgetting their requests and tokens; how many."""
    query = LOG_TABLE.update().where(
        LOG_TABLE.c.stack_id == stack_id, LOG_TABLE.c.state == T.QUEUED
    )
    if traversal is not None:
        query = query.where(LOG_TABLE.c.id == traversal)
    return session.execute(
        query.values(
            state=T.CANCELLED,
            status_reason=reason,
            finished_at=models.utcnow(),
            request=None,
            caller_token=None,
        )
    ).rowcount


@retry_read
def queued_idle_stacks():
    """Ids of the stacks with QUEUED traversals and no operation running
    (deleted ones included): their queue waits for someone to start it
    (the watchdog, when the engine that finished the last one died)."""
    with transaction(writer=False) as session:
        return sorted(
            session.execute(
                sa.select(LOG_TABLE.c.stack_id)
                .join(STACK, STACK.c.id == LOG_TABLE.c.stack_id)
                .where(
                    LOG_TABLE.c.state == T.QUEUED,
                    sa.or_(
                        STACK.c.status != "IN_PROGRESS",
                        STACK.c.deleted_at.is_not(None),
                    ),
                )
                .distinct()
            ).scalars()
        )


# Reads and settings ----------------------------------------------------------
@retry_read
def log_list(stack_id):
    """The stack's traversals, newest first (queued ones included)."""
    with transaction(writer=False) as session:
        return [
            as_dict(r)
            for r in session.execute(
                sa.select(*_SHOWN)
                .where(LOG_TABLE.c.stack_id == stack_id)
                .order_by(LOG_TABLE.c.seq.desc())
            )
        ]


@retry_read
def log_get(stack_id, traversal):
    """One traversal of the stack.

    :raises TraversalNotFound: if the stack has no such traversal (kept).
    """
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(*_SHOWN).where(
                LOG_TABLE.c.stack_id == stack_id, LOG_TABLE.c.id == traversal
            )
        ).first()
    if row is None:
        raise exception.TraversalNotFound(traversal=traversal)
    return as_dict(row)


@retry_write
def stack_set_semantics(stack_id, semantics, cancel_queued=None):
    """Set the stack's update semantics (None: converge).

    :param cancel_queued: if given, the reason with which the updates
        still queued are CANCELLED (the stack leaves ``queue``).
    :returns: False if the stack is gone (deleted).
    """
    with transaction() as session:
        result = session.execute(
            STACK.update()
            .where(STACK.c.id == stack_id, STACK.c.deleted_at.is_(None))
            .values(update_semantics=semantics)
        )
        if result.rowcount != 1:
            return False
        if cancel_queued:
            _cancel_queued(session, stack_id, cancel_queued)
        return True
