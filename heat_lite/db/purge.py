"""Keeping the database small: record history, event retention and the
hard delete of soft-deleted stacks (``heat-lite-manage purge_deleted``).

When a stack's operation ends, its deleted record versions become
``history`` rows (kept for ``/versions``) and the oldest of them, beyond
``[engine] max_record_versions`` per resource, go; so do the oldest events
beyond ``max_events_per_stack``. Both run inside the transaction that
finishes the stack, a few statements per operation, none per resource.
The signals a record kept (``db.signals``) go when it becomes history.
``purge_deleted`` removes soft-deleted stacks, the stacks nested in them
and every row that belongs to them, a batch of stacks per transaction;
a live stack (``deleted_at`` unset) is never touched.
"""

import collections

import sqlalchemy as sa

from heat_lite import conf
from heat_lite.common.states import TRAVERSAL as TRAVERSAL_STATES
from heat_lite.common.states import Action, Role, Status
from heat_lite.db import apps as db_apps
from heat_lite.db import builds as db_builds
from heat_lite.db import image_holds, models
from heat_lite.db import promotions as db_promotions
from heat_lite.db.session import retry_write, transaction

CONF = conf.CONF
STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
EVENT = models.Event.__table__
SYNC = models.SyncPoint.__table__
TRAVERSAL = models.Traversal.__table__
TRAVERSAL_LOG = models.TraversalLog.__table__
TEMPLATE = models.RawTemplate.__table__
SERVICE = models.Service.__table__
VERIFICATION = models.Verification.__table__
SIGNAL = models.ResourceSignal.__table__
DRIFT = models.StackDrift.__table__
PLAN = models.StackPlan.__table__
_CHUNK = 500
# What purge_deleted counts.
PURGED = (
    "stacks",
    "nested",
    "resources",
    "events",
    "templates",
    "traversals",
    "sync_points",
    "services",
    "apps",
    "builds",
    "image_references",
)


def _chunks(items, size=_CHUNK):
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i : i + size]


# Record history ------------------------------------------------------------
def records_to_history(session, stack_id, every=False):
    """Turn the stack's deleted (DELETE_COMPLETE) records into history
    (``every``: all its records, the stack itself being deleted).

    Runs in the transaction that finishes the stack: no traversal can act
    on them any more. The oldest history versions beyond
    ``max_record_versions`` per resource are deleted.

    :returns: the number of records that became history.
    """
    which = [RESOURCE.c.stack_id == stack_id, RESOURCE.c.role != Role.HISTORY]
    if not every:
        which += [
            RESOURCE.c.action == Action.DELETE,
            RESOURCE.c.status == Status.COMPLETE,
        ]
    result = session.execute(
        RESOURCE.update()
        .where(*which)
        .values(
            role=Role.HISTORY, engine_id=None, lock_traversal=None, hook=None
        )
    )
    if result.rowcount:
        _drop_signals_of_history(session, stack_id)
        history_trim(session, stack_id, CONF.engine.max_record_versions)
    return result.rowcount


def _drop_signals_of_history(session, stack_id):
    """The signals kept by the stack's history records (``db.signals``):
    nobody reads them again (a replaced UpdateWaitConditionHandle's, a
    deleted stack's)."""
    history = sa.select(RESOURCE.c.id).where(
        RESOURCE.c.stack_id == stack_id, RESOURCE.c.role == Role.HISTORY
    )
    session.execute(
        SIGNAL.delete().where(
            SIGNAL.c.stack_id == stack_id, SIGNAL.c.resource_id.in_(history)
        )
    )


def history_trim(session, stack_id, keep):
    """Delete the history rows of each resource beyond its ``keep``
    newest versions (the live ones count, and are never deleted)."""
    rows = session.execute(
        sa.select(RESOURCE.c.id, RESOURCE.c.name, RESOURCE.c.role)
        .where(RESOURCE.c.stack_id == stack_id)
        .order_by(RESOURCE.c.name, RESOURCE.c.version.desc())
    )
    seen = collections.Counter()
    doomed = []
    for row in rows:
        seen[row.name] += 1
        if seen[row.name] > keep and row.role == Role.HISTORY:
            doomed.append(row.id)
    for chunk in _chunks(doomed):
        image_holds.forget_records(session, chunk)
        session.execute(RESOURCE.delete().where(RESOURCE.c.id.in_(chunk)))
    return len(doomed)


# Events --------------------------------------------------------------------
def event_count(stack_id):
    """A scalar subquery: the number of events of the stack."""
    return (
        sa.select(sa.func.count())
        .select_from(EVENT)
        .where(EVENT.c.stack_id == stack_id)
        .scalar_subquery()
    )


def events_trim(session, stack_id, count, keep=None, batch=None):
    """Delete the stack's oldest events when it has more than ``keep``
    (``max_events_per_stack``; 0 keeps all), in multiples of ``batch``
    (``event_purge_batch_size``) so that this happens once per batch of
    new events, not at every operation.

    :param count: the stack's number of events (``event_count``).
    :returns: the number of events deleted.
    """
    keep = CONF.max_events_per_stack if keep is None else keep
    batch = CONF.event_purge_batch_size if batch is None else batch
    excess = count - keep
    if not keep or excess <= 0:
        return 0
    doomed = min(count, -(-excess // batch) * batch)
    last = session.execute(
        sa.select(EVENT.c.id)
        .where(EVENT.c.stack_id == stack_id)
        .order_by(EVENT.c.id)
        .offset(doomed - 1)
        .limit(1)
    ).scalar()
    result = session.execute(
        EVENT.delete().where(EVENT.c.stack_id == stack_id, EVENT.c.id <= last)
    )
    return result.rowcount


# Soft-deleted stacks -------------------------------------------------------
def purge_deleted(older_than, tenant=None, batch_size=20):
    """Hard-delete the stacks soft-deleted before ``older_than``.

    Each batch of ``batch_size`` such stacks goes in one transaction with
    the stacks nested in them (at any depth) that are soft-deleted too,
    and with their records, events, sync points, traversals and
    templates. The finished traversals of live stacks that ended before
    ``older_than`` (their traversal history), engine service rows and
    apps deleted before ``older_than`` go too, with the apps' builds and
    build logs. The image references of the records deleted go with
    them (and, purging every project, any a record left behind).

    :param tenant: only the stacks of this project.
    :returns: {name: rows deleted} for each name of ``PURGED``
        (``stacks``: the top ones, ``nested``: the stacks in them).
    """
    totals = collections.Counter()
    while True:
        batch = _purge_batch(older_than, tenant, batch_size)
        if not batch["stacks"]:
            break
        totals.update(batch)
    totals["traversals"] += _purge_traversal_history(older_than, tenant)
    totals["services"] = _purge_services(older_than)
    # an app's builds and their logs first: they name the app
    totals["builds"] = db_builds.purge_of_deleted_apps(older_than, tenant)
    totals["apps"] = db_apps.purge_deleted(older_than, tenant)
    if tenant is None:
        totals["image_references"] += _forget_orphaned_image_references()
    return {key: totals[key] for key in PURGED}


@retry_write
def _forget_orphaned_image_references():
    """The image references of records deleted by versions that did not
    drop them with the record (``image_holds.forget_orphans``)."""
    with transaction() as session:
        return image_holds.forget_orphans(session)


@retry_write
def _purge_traversal_history(older_than, tenant):
    """Delete the traversal history rows that finished before
    ``older_than`` (of ``tenant``'s stacks only, if given)."""
    query = TRAVERSAL_LOG.delete().where(
        TRAVERSAL_LOG.c.state.in_(TRAVERSAL_STATES.FINISHED),
        TRAVERSAL_LOG.c.finished_at < older_than,
    )
    if tenant is not None:
        query = query.where(
            TRAVERSAL_LOG.c.stack_id.in_(
                sa.select(STACK.c.id).where(STACK.c.tenant == tenant)
            )
        )
    with transaction() as session:
        return session.execute(query).rowcount


@retry_write
def _purge_batch(older_than, tenant, batch_size):
    """One transaction of ``purge_deleted``: its rows deleted, by name
    (a transaction that met a busy database is run again whole)."""
    with transaction() as session:
        query = (
            sa.select(STACK.c.id)
            .where(
                STACK.c.deleted_at.is_not(None),
                STACK.c.deleted_at < older_than,
            )
            .order_by(STACK.c.deleted_at, STACK.c.id)
            .limit(batch_size)
        )
        if tenant is not None:
            query = query.where(STACK.c.tenant == tenant)
        roots = list(session.execute(query).scalars())
        if not roots:
            return collections.Counter()
        nested = _deleted_descendants(session, roots)
        batch = collections.Counter(_delete_stacks(session, roots + nested))
        batch["stacks"] += len(roots)
        batch["nested"] += len(nested)
        return batch


@retry_write
def _purge_services(older_than):
    with transaction() as session:
        return session.execute(
            SERVICE.delete().where(
                SERVICE.c.deleted_at.is_not(None),
                SERVICE.c.deleted_at < older_than,
            )
        ).rowcount


def _deleted_descendants(session, roots):
    """Soft-deleted stacks nested under ``roots`` (any depth): a live
    descendant, and what is nested in it, is left alone."""
    found, parents = [], list(roots)
    while parents:
        level = []
        for chunk in _chunks(parents):
            level.extend(
                session.execute(
                    sa.select(STACK.c.id).where(
                        STACK.c.owner_id.in_(chunk),
                        STACK.c.deleted_at.is_not(None),
                    )
                ).scalars()
            )
        found.extend(level)
        parents = level
    return found


def _delete_stacks(session, stack_ids):
    counts = collections.Counter()
    for chunk in _chunks(stack_ids):
        for table, key in (
            (SYNC, "sync_points"),
            (TRAVERSAL, "traversals"),
            # Their traversal history (and any queue left) too.
            (TRAVERSAL_LOG, "traversals"),
            (EVENT, "events"),
        ):
            counts[key] += session.execute(
                table.delete().where(table.c.stack_id.in_(chunk))
            ).rowcount
        # The images its records named count no more (image_holds).
        counts["image_references"] += image_holds.forget_records(
            session,
            sa.select(RESOURCE.c.id).where(RESOURCE.c.stack_id.in_(chunk)),
        )
        counts["resources"] += session.execute(
            RESOURCE.delete().where(RESOURCE.c.stack_id.in_(chunk))
        ).rowcount
        # Verified updates' outcomes (engine.traversal.verify) and the
        # signals its records kept (a signal that raced the stack's delete)
        # go with their stack, and so do its last drift report and its
        # saved plans.
        for table in (VERIFICATION, SIGNAL, DRIFT, PLAN):
            session.execute(table.delete().where(table.c.stack_id.in_(chunk)))
        # No promotion into a purged stack can roll back any more.
        db_promotions.release_holds_of_targets(session, chunk)
        session.execute(STACK.delete().where(STACK.c.id.in_(chunk)))
        counts["templates"] += session.execute(
            TEMPLATE.delete().where(TEMPLATE.c.stack_id.in_(chunk))
        ).rowcount
    return counts
