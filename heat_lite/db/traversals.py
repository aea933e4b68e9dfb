"""Traversals: one walk of a stack's graph, from its start (a
compare-and-swap on ``stack.current_traversal`` that plans the graph and
stores its sync points) to the stack's finish (its final state, and the
purge of what the walk left behind).
"""

import json

import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common.states import Role
from heat_lite.db import (
    dialects,
    models,
    plans,
    stacks,
    statements,
    templates,
    traversal_log,
    verifications,
)
from heat_lite.db import events as db_events
from heat_lite.db import purge as db_purge
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction
from heat_lite.db.sync_points import insert_sync_points

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
TRAVERSAL = models.Traversal.__table__
TEMPLATE = models.RawTemplate.__table__


@retry_write
def traversal_begin(
    stack_id,
    expected,
    stack_values,
    events,
    planner,
    new_template=None,
    caller_token=None,
    refused_actions=(),
    verify=None,
    running=False,
    log=None,
    plan=None,
):
    """Start a traversal: swap the stack's traversal and plan the graph.

    In one transaction: compare-and-swap ``current_traversal`` from
    ``expected`` to ``stack_values['current_traversal']``; read the live
    records (history rows left out: ``planner.choose`` asks for their
    newest versions only when it makes new records) and let it say which
    records to insert and which roles change; let
    ``planner.build(ids_by_name)`` return the graph document and the sync
    point counts; store them; drop the sync
    points of older traversals. ``new_template`` (template, environment,
    files) is stored first and becomes the stack's template and the
    planner's ``goal_template_id``. ``caller_token`` (encrypted, see
    ``db.caller_tokens``) is kept with the new traversal. The swap
    also requires the stack not to be deleted and its action not to be
    one of ``refused_actions`` (and, with ``running``, the stack to be
    IN_PROGRESS: a rollback that follows a failure). ``verify`` (a
    checked ``verify`` document) is stored with it and flagged in its
    graph. ``log`` says how the traversal log records the start
    (``traversal_log.log_start``; None: a plain start of the action).
    ``plan`` ({"id", "stack_name"}) is a saved plan this start applies:
    it is checked against the stack's records and claimed in the same
    transaction, before the swap (``plans.plan_claim``).

    :returns: the planner's return of ``build``.
    :raises ConcurrentTransaction: if the stack's traversal changed, it
        was deleted or its action is refused (or a queued traversal was
        started or cancelled by someone else).
    :raises StalePlan, PlanExpired, PlanAlreadyApplied, PlanNotFound:
        the ``plan`` may not be applied (nothing is written).
    """
    traversal = stack_values["current_traversal"]
    with transaction() as session:
        if new_template is not None:
            template_id = templates.raw_template_insert(
                session, stack_id, *new_template
            )
            stack_values = dict(stack_values, raw_template_id=template_id)
            planner.goal_template_id = template_id
        if plan is not None:
            plans.plan_claim(
                session, plan, stack_id, traversal, models.utcnow()
            )
        if not stacks.stack_update_if_traversal(
            session,
            stack_id,
            expected,
            stack_values,
            refused_actions,
            running=running,
        ):
            raise exception.ConcurrentTransaction(what="stack %s" % stack_id)
        traversal_log.log_start(
            session,
            stack_id,
            traversal,
            log or {"action": stack_values["action"]},
        )
        db_events.event_insert(session, *events)
        built = _plan(session, stack_id, planner)
        if verify is not None:
            built.graph["verify"] = True
            verifications.verification_insert(
                session, traversal, stack_id, verify
            )
        _store(session, stack_id, traversal, built, caller_token)
        return built


def _plan(session, stack_id, planner):
    """Let ``planner`` choose among the stack's live records, write the
    records it changes and inserts, and build the graph on their ids."""
    records = [
        as_dict(r)
        for r in session.execute(
            RESOURCE.select()
            .where(
                RESOURCE.c.stack_id == stack_id,
                RESOURCE.c.role != Role.HISTORY,
            )
            .order_by(RESOURCE.c.id)
        )
    ]
    plan = planner.choose(
        records, lambda: _history_versions(session, stack_id)
    )
    for record_id, values in sorted(plan.updates.items()):
        session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id)
            .values(**values)
        )
    ids = dict(plan.chosen)
    writes: dialects.Writes = dialects.writes()
    ids.update(writes.insert_records(session, plan.inserts))
    return planner.build(ids)


def _store(session, stack_id, traversal, built, caller_token):
    """Store ``traversal``'s graph and sync points in place of the older
    traversals' of the stack."""
    session.execute(SYNC.delete().where(SYNC.c.stack_id == stack_id))
    session.execute(TRAVERSAL.delete().where(TRAVERSAL.c.stack_id == stack_id))
    session.execute(
        TRAVERSAL.insert().values(
            id=traversal,
            stack_id=stack_id,
            graph=json.dumps(built.graph),
            caller_token=caller_token,
            created_at=models.utcnow(),
        )
    )
    insert_sync_points(session, stack_id, traversal, built.counts)


def _history_versions(session, stack_id):
    """{name: newest version} of the stack's history rows: a new record
    must be numbered after them, though they are never chosen."""
    return dict(
        session.execute(
            sa.select(RESOURCE.c.name, sa.func.max(RESOURCE.c.version))
            .where(
                RESOURCE.c.stack_id == stack_id,
                RESOURCE.c.role == Role.HISTORY,
            )
            .group_by(RESOURCE.c.name)
        ).all()
    )


@retry_read
def traversal_get(traversal_id):
    """Return the traversal's graph documents, or None if it is gone."""
    with transaction(writer=False) as session:
        row = session.execute(
            TRAVERSAL.select().where(TRAVERSAL.c.id == traversal_id)
        ).first()
    if row is None:
        return None
    row = as_dict(row)
    row["graph"] = json.loads(row["graph"])
    row["cleanup_graph"] = (
        json.loads(row["cleanup_graph"]) if row["cleanup_graph"] else None
    )
    return row


@retry_write
def cleanup_begin(stack_id, traversal, planner):
    """Plan and store the cleanup phase of ``traversal`` exactly once.

    ``planner(records)`` gets every live record not converged in this
    traversal and returns ``(graph, counts)``.

    :returns: the graph, or None if the traversal is stale or its cleanup
        phase was already planned by someone else.
    """
    with transaction() as session:
        current = session.execute(
            sa.select(STACK.c.current_traversal).where(STACK.c.id == stack_id)
        ).scalar()
        if current != traversal:
            return None
        records = [
            as_dict(r)
            for r in session.execute(
                RESOURCE.select().where(
                    RESOURCE.c.stack_id == stack_id,
                    sa.or_(
                        RESOURCE.c.converged_traversal.is_(None),
                        RESOURCE.c.converged_traversal != traversal,
                    ),
                    sa.not_(
                        sa.and_(
                            RESOURCE.c.action == "DELETE",
                            RESOURCE.c.status == "COMPLETE",
                        )
                    ),
                )
            )
        ]
        graph, counts = planner(records)
        result = session.execute(
            TRAVERSAL.update()
            .where(
                TRAVERSAL.c.id == traversal,
                TRAVERSAL.c.cleanup_graph.is_(None),
            )
            .values(cleanup_graph=json.dumps(graph))
        )
        if result.rowcount != 1:
            session.rollback()
            return None
        insert_sync_points(session, stack_id, traversal, counts)
        return graph


# The end of a traversal -----------------------------------------------------
@retry_write
def stack_finish(
    stack_id,
    traversal,
    values,
    events,
    purge,
    delete=False,
    running=True,
    log_state=None,
):
    """Set the stack's final state for ``traversal`` and purge.

    Only a stack still IN_PROGRESS (unless ``running`` is False: an
    abandon) is finished: a finish decided on a row read before another
    finish of the same traversal must not undo it.

    :param purge: turn DELETE_COMPLETE records into history (trimmed
        to ``max_record_versions``), trim the events to
        ``max_events_per_stack``, drop sync points and traversals; when
        the stack is COMPLETE (no record can be locked any more) also the
        templates no longer referenced.
    :param delete: soft-delete the stack; all its records become history
        (``heat-lite-manage purge_deleted`` removes them).
    :param log_state: the traversal's final state in the traversal log
        (default: the stack's new status, COMPLETE or FAILED).
    :returns: False if the traversal was superseded.
    """
    with transaction() as session:
        if delete:
            # A deleted stack keeps no trust (engine.trusts deleted the
            # root's; a nested stack's was a copy).
            values = dict(
                values,
                deleted_at=models.utcnow(),
                live_name=None,
                trust_id=None,
            )
        if not stacks.stack_update_if_traversal(
            session, stack_id, traversal, values, running=running
        ):
            return False
        db_events.event_insert(session, *events)
        traversal_log.log_finish(
            session,
            stack_id,
            traversal,
            log_state or values.get("status"),
            values.get("status_reason"),
            delete=delete,
        )
        if delete:
            # Its records stay as history until purge_deleted.
            db_purge.records_to_history(session, stack_id, every=True)
        if purge or delete:
            _purge(
                session, stack_id, templates=values.get("status") == "COMPLETE"
            )
        return True


def _purge(session, stack_id, templates):
    # Deleted versions are kept as history (see db.purge), the oldest
    # events beyond the stack's limit go.
    db_purge.records_to_history(session, stack_id)
    session.execute(SYNC.delete().where(SYNC.c.stack_id == stack_id))
    session.execute(TRAVERSAL.delete().where(TRAVERSAL.c.stack_id == stack_id))
    if not templates:
        # A failed or cancelled traversal may still have actions running
        # that will record the template they worked for. (Its events are
        # trimmed when the stack next completes.)
        return
    # The event count rides on a read made anyway: no statement more.
    stack = session.execute(
        sa.select(
            STACK.c.raw_template_id,
            STACK.c.prev_raw_template_id,
            db_purge.event_count(stack_id).label("events"),
        ).where(STACK.c.id == stack_id)
    ).first()
    db_purge.events_trim(session, stack_id, stack.events)
    keep = {stack.raw_template_id, stack.prev_raw_template_id} | set(
        session.execute(
            sa.select(RESOURCE.c.template_id)
            .where(RESOURCE.c.stack_id == stack_id)
            .distinct()
        ).scalars()
    )
    keep.discard(None)
    session.execute(
        TEMPLATE.delete().where(
            TEMPLATE.c.stack_id == stack_id, TEMPLATE.c.id.not_in(keep)
        )
    )


def progress_marks(stack_ids):
    """What moves when a traversal makes progress, per stack, in one
    query per 500 stacks: every record write bumps its ``atomic_key``, a
    replacement adds a record, and held locks say an action runs.

    :returns: {stack_id: (records, sum of atomic_key, locked records)}.
    """
    result = {}
    with transaction(writer=False) as session:
        for chunk in statements.chunks(stack_ids):
            rows = session.execute(
                sa.select(
                    RESOURCE.c.stack_id,
                    sa.func.count(),
                    sa.func.sum(RESOURCE.c.atomic_key),
                    sa.func.count(RESOURCE.c.engine_id),
                )
                .where(RESOURCE.c.stack_id.in_(chunk))
                .group_by(RESOURCE.c.stack_id)
            )
            result.update({r[0]: (r[1], int(r[2] or 0), r[3]) for r in rows})
    return result
