"""Queries of the convergence engine: versioned resource records, sync
points and traversals.

A write that must not race is conditional: a record is locked with
``UPDATE ... WHERE atomic_key = :seen AND engine_id IS NULL`` (and only
while the locker's service row is live in the epoch it claims), and every
later write of the holder is guarded by ``engine_id = :me AND lock_epoch
= :epoch``: an engine that was claimed as dead (fenced) has its late
writes refused. A lock ``owner`` is the pair ``(engine_id, epoch)``. A
traversal starts with a compare-and-swap on ``stack.current_traversal``.
A sync point counts the predecessors a node still waits for; the
transaction whose decrement reaches zero fires it.
"""

import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Role
from heat_lite.db import api as db_api
from heat_lite.db import direct, models, statements, verifications
from heat_lite.db import purge as db_purge
from heat_lite.db import session as db_session
from heat_lite.db.session import retry_read, transaction

STACK = models.Stack.__table__
SERVICE = models.Service.__table__
RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
TRAVERSAL = models.Traversal.__table__
TEMPLATE = models.RawTemplate.__table__
EVENT = models.Event.__table__

_retry = db_session.retry_write

BARRIER = "barrier"
STACK_PHASE = "stack"
_CHUNK = 500

CONF = conf.CONF


def _row(row):
    return dict(row._mapping) if row is not None else None


def _chunks(items, size=_CHUNK):
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i : i + size]


# Traversals ----------------------------------------------------------------
@_retry
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
    graph.

    :returns: the planner's return of ``build``.
    :raises ConcurrentTransaction: if the stack's traversal changed, it
        was deleted or its action is refused.
    """
    traversal = stack_values["current_traversal"]
    with transaction() as session:
        if new_template is not None:
            template_id = db_api.raw_template_insert(
                session, stack_id, *new_template
            )
            stack_values = dict(stack_values, raw_template_id=template_id)
            planner.goal_template_id = template_id
        if not db_api.stack_update_if_traversal(
            session,
            stack_id,
            expected,
            stack_values,
            refused_actions,
            running=running,
        ):
            raise exception.ConcurrentTransaction(what="stack %s" % stack_id)
        db_api.event_insert(session, *events)
        records = [
            _row(r)
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
        ids.update(_insert_records(session, plan.inserts))
        built = planner.build(ids)
        if verify is not None:
            built.graph["verify"] = True
            verifications.verification_insert(
                session, traversal, stack_id, verify
            )
        session.execute(SYNC.delete().where(SYNC.c.stack_id == stack_id))
        session.execute(
            TRAVERSAL.delete().where(TRAVERSAL.c.stack_id == stack_id)
        )
        session.execute(
            TRAVERSAL.insert().values(
                id=traversal,
                stack_id=stack_id,
                graph=json.dumps(built.graph),
                caller_token=caller_token,
                created_at=models.utcnow(),
            )
        )
        _insert_sync_points(session, stack_id, traversal, built.counts)
        return built


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


def _insert_records(session, rows):
    """Insert new records in batches; return {name: id}.

    One multi-row INSERT ... RETURNING per batch on PostgreSQL, SQLite
    and MariaDB instead of one statement per resource.
    """
    ids = {}
    dialect = session.dialect
    for chunk in _chunks(rows):
        if dialect.insert_executemany_returning:
            result = session.execute(
                RESOURCE.insert().returning(
                    RESOURCE.c.id,
                    RESOURCE.c.name,
                    sort_by_parameter_order=True,
                ),
                chunk,
            )
            ids.update({name: rid for rid, name in result})
        else:
            for values in chunk:
                result = session.execute(RESOURCE.insert().values(**values))
                ids[values["name"]] = result.inserted_primary_key[0]
    return ids


def _insert_sync_points(session, stack_id, traversal, counts):
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
    for chunk in _chunks(rows):
        session.execute(SYNC.insert(), chunk)


@retry_read
def traversal_get(traversal_id):
    """Return the traversal's graph documents, or None if it is gone."""
    with transaction(writer=False) as session:
        row = session.execute(
            TRAVERSAL.select().where(TRAVERSAL.c.id == traversal_id)
        ).first()
    if row is None:
        return None
    row = _row(row)
    row["graph"] = json.loads(row["graph"])
    row["cleanup_graph"] = (
        json.loads(row["cleanup_graph"]) if row["cleanup_graph"] else None
    )
    return row


@_retry
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
            _row(r)
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
        _insert_sync_points(session, stack_id, traversal, counts)
        return graph


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


def _decrement(session, traversal, phase, entities):
    """Decrement sync points; return (fired entity ids, all found)."""
    if not entities:
        return [], True
    params = {"_traversal": traversal, "_phase": phase}
    dialect = session.dialect
    if dialect.name == "mysql" and len(set(entities)) == 1:
        # MySQL has no UPDATE ... RETURNING; LAST_INSERT_ID(expr) hands the
        # new value back in the statement's OK packet instead of a SELECT.
        result = direct.execute(
            session,
            statements.sync_decrement_last_insert_id(),
            dict(params, _entity=entities[0]),
        )
        if result.rowcount != 1:
            return [], False
        return ([entities[0]] if result.lastrowid == 0 else []), True
    if len(set(entities)) == 1:
        # The usual case (one successor, or the join): a prebuilt
        # statement on the cursor.
        params["_entity"] = entities[0]
        if dialect.update_returning:
            result = direct.execute(
                session, statements.sync_decrement(True, single=True), params
            )
            if not result.rows:
                return [], False
            return ([entities[0]] if result.rows[0][1] == 0 else []), True
        result = direct.execute(
            session, statements.sync_decrement(False, single=True), params
        )
        if result.rowcount != 1:
            return [], False
        fired = direct.execute(session, statements.sync_fired_one(), params)
        return ([entities[0]] if fired.rows else []), True
    params["_entities"] = sorted(entities)
    if dialect.update_returning:
        rows = session.execute(statements.sync_decrement(True), params).all()
        found = len(rows)
        fired = [e for e, remaining in rows if remaining == 0]
    else:
        found = session.execute(
            statements.sync_decrement(False), params
        ).rowcount
        fired = list(
            session.execute(statements.sync_fired(), params).scalars()
        )
    return sorted(fired), found == len(set(entities))


# Records -------------------------------------------------------------------
def _load(session, record_id):
    return direct.execute(
        session, statements.record_select(), {"_rid": record_id}
    ).first()


@retry_read
def resource_load(record_id):
    """Return the record joined with its stack's traversal and template.

    :returns: a dict, or None if the record is gone.
    """
    with transaction(writer=False) as session:
        return _load(session, record_id)


def node_scope():
    """The scope of one node: a ``node_load`` whose ``keep`` says so is
    continued by the node's next transaction (``session.continued``)."""
    return db_session.continued()


def _load_checking(session, record_id, traversal, handed):
    """``_load``, and which of the ``handed`` records ({record id:
    record}) are still as the database holds them, converged in
    ``traversal``, in the same statement.

    A handed record is either the whole row its finish returned
    (PostgreSQL), confirmed by its atomic_key (``record_select_checking``),
    or its id alone (the other dialects' finish returns nothing): it is
    then read along with the record (``records_select_ids``), and taken
    if it converged in ``traversal``.

    :returns: (record or None, {name: record} of those confirmed)
    """
    if not handed or len(handed) > statements.MAX_PREBUILT_ROWS:
        return _load(session, record_id), {}
    ids = sorted(handed)
    if not all("atomic_key" in handed[i] for i in ids):
        return _load_along(session, record_id, traversal, ids)
    params = {"_rid": record_id, "_traversal": traversal}
    params.update(("_dep%d" % n, i) for n, i in enumerate(ids))
    record = direct.execute(
        session, statements.record_select_checking(len(ids)), params
    ).first()
    if record is None:
        return None, {}
    confirmed = {}
    for n, i in enumerate(ids):
        if record.pop("_dep_key%d" % n) == handed[i]["atomic_key"]:
            confirmed[handed[i]["name"]] = handed[i]
    return record, confirmed


def _load_along(session, record_id, traversal, ids):
    """Record ``record_id`` and records ``ids`` in one read; those of
    ``ids`` converged in ``traversal`` are returned by name, without
    their stack's columns (as ``_converged`` returns them)."""
    params = {"_rid": record_id}
    params.update(("_dep%d" % n, i) for n, i in enumerate(ids))
    rows = direct.execute(
        session, statements.records_select_ids(len(ids)), params
    ).dicts()
    record, confirmed = None, {}
    for row in rows:
        if row["id"] == record_id:
            record = row
        elif row["converged_traversal"] == traversal:
            confirmed[row["name"]] = {
                k: v for k, v in row.items() if k not in statements.STACK_KEYS
            }
    return record, confirmed if record is not None else {}


@retry_read
def node_load(record_id, traversal, depends_on, keep=None, handed=None):
    """Read what an update node needs in one read transaction.

    Follows ``replaced_by`` to the record's newest version, then asks
    ``depends_on(record)`` for the names of the resources it depends on
    (None when it cannot tell) and loads those that converged in
    ``traversal``. One transaction instead of two saves a connection
    checkout and a round trip per node, which is most of a chain step.
    Inside ``node_scope()``, if ``keep(record)`` says the node will write
    soon (an instant record), the transaction stays open and the node's
    write (its finish, or its lock) continues it. ``handed`` records
    ({record id: record}, what the finish of a dependency handed on: its
    row, or its id alone) stand for the dependency's own read if the
    record's read confirms or reads them (``_load_checking``): a chain
    step reads one statement, not two.

    :returns: (record or None, {name: record} or None if not loaded)
    """
    with transaction(writer=False, keep=True) as session:
        record, confirmed = _load_checking(
            session, record_id, traversal, handed
        )
        while record is not None and record["replaced_by"]:
            record, confirmed = _load(session, record["replaced_by"]), {}
        if record is None or keep is None or not keep(record):
            db_session.release()
        names = depends_on(record) if record is not None else None
        if names is None or not names:
            return record, None if names is None else {}
        known = {n: confirmed[n] for n in names if n in confirmed}
        missing = [n for n in names if n not in known]
        if missing:
            known.update(
                _converged(session, record["stack_id"], missing, traversal)
            )
        return record, known


def _converged(session, stack_id, names, traversal):
    names = sorted(set(names))
    if len(names) <= statements.MAX_PREBUILT_ROWS:
        params = {"_stack": stack_id, "_traversal": traversal}
        params.update(("_name%d" % i, n) for i, n in enumerate(names))
        rows = direct.execute(
            session, statements.converged_select_names(len(names)), params
        ).dicts()
        return {r["name"]: r for r in rows}
    rows = session.execute(
        statements.converged_select(),
        {"_stack": stack_id, "_names": sorted(names), "_traversal": traversal},
    )
    return {r.name: _row(r) for r in rows}


@retry_read
def resources_converged(stack_id, names, traversal):
    """Return {name: record} of records converged in ``traversal``."""
    if not names:
        return {}
    with transaction(writer=False) as session:
        return _converged(session, stack_id, names, traversal)


def _held_by(owner):
    """The lock is held by ``owner`` = (engine_id, epoch)."""
    return sa.and_(
        RESOURCE.c.engine_id == owner[0], RESOURCE.c.lock_epoch == owner[1]
    )


@_retry
def resource_lock(record_id, atomic_key, owner, traversal, values):
    """Take the record's lock (and set ``values``) if nobody holds it and
    ``owner`` (engine_id, epoch) is a live engine life: a claimed engine
    cannot take new locks.

    :returns: True if the lock was taken.
    """
    params = dict(
        values,
        _rid=record_id,
        _key=atomic_key,
        _engine=owner[0],
        _epoch=owner[1],
        _traversal=traversal,
        _now=models.utcnow(),
    )
    with transaction(single=True) as session:
        result = session.execute(statements.record_lock(values), params)
        return result.rowcount == 1


@_retry
def resource_progress(record_id, owner, values, events=()):
    """Write progress of a record locked by ``owner`` (physical id, data,
    events).

    :raises ConcurrentTransaction: if ``owner`` lost the lock.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id, _held_by(owner))
            .values(**values)
        )
        if result.rowcount != 1:
            raise exception.ConcurrentTransaction(
                what="resource %s" % record_id
            )
        db_api.event_insert(session, *events)


@_retry
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
    With a ``taker`` (see ``resources_take``), the successors that fired
    (at most ``taker.limit``) are read and taken in the same transaction;
    ``taker.result`` holds them once it committed. A ``handing`` list
    gets, for the nodes the finish makes ready, the record as the finish
    left it where the finish returns it (PostgreSQL's one statement),
    else its id alone (``{"id": record_id}``: they read it along with
    their own record, ``node_load``).

    :returns: (fired entity ids, superseded) where superseded means the
        traversal's sync points are gone.
    :raises ConcurrentTransaction: if the lock or atomic_key was lost.
    """
    if taker is not None:
        taker.result = []
    engine_id, epoch = owner or (None, None)
    params = dict(
        values,
        _rid=record_id,
        _now=models.utcnow(),
        _engine=engine_id,
        _epoch=epoch,
        _key=atomic_key,
    )
    # The sync points to decrement: the successors', or the phase's join.
    if successors:
        sync_phase, entities = phase, successors
    else:
        sync_phase = BARRIER if phase == "update" else STACK_PHASE
        entities = [0]
    in_one = _in_one(db_session.dialect(), events, entities)
    separate = dict(
        params=params,
        values=values,
        events=events,
        locked=bool(owner),
        sync=(traversal, sync_phase, entities),
    )
    with transaction(single=in_one and taker is None) as session:
        if in_one:
            fired, found = _finish_in_one(
                session,
                statements.finish_in_one(
                    values,
                    bool(owner),
                    len(events),
                    wait_for_wal=_durable(owner, taker),
                ),
                dict(params, _traversal=traversal, _phase=sync_phase),
                events,
                entities[0],
                handing,
            )
        elif _takes_in_finish(session, taker, successors):
            fired, found = _finish_taking_mysql(
                session, taker=taker, **separate
            )
            return [(e, phase) for e in fired], not found
        else:
            fired, found = _finish(session, **separate)
            if handing is not None:
                handing.append({"id": record_id})
        if not successors:
            return ([(0, sync_phase)] if fired else []), not found
        if taker is not None and fired:
            taker.result = _take(
                session, fired[: taker.limit], traversal, taker
            )
        return [(e, phase) for e in fired], not found


def _takes_in_finish(session, taker, successors):
    """Whether the finish itself may take its successor
    (``_finish_taking_mysql``): MySQL, a taker, one successor."""
    return (
        taker is not None
        and taker.limit > 0
        and len(successors) == 1
        and session.dialect.name == "mysql"
    )


def _finish(session, params, values, events, locked, sync):
    """``resource_finish``'s writes as separate statements: the events
    (rolled back with the transaction if the guard then fails), then the
    record and the sync points (``_finish_record``)."""
    db_api.event_insert(session, *events)
    return _finish_record(session, params, values, locked, sync)


def _finish_record(session, params, values, locked, sync):
    """The record (``locked``: guarded by its lock, else by its
    atomic_key) and the sync points ``sync`` = (traversal, phase,
    entities). On MySQL with one sync point the record and the sync
    point are one UPDATE (``statements.finish_with_sync_mysql``); only
    when it matches nothing are the two statements run to tell a lost
    guard from a gone traversal."""
    traversal, phase, entities = sync
    if session.dialect.name == "mysql" and len(set(entities)) == 1:
        both = direct.execute(
            session,
            statements.finish_with_sync_mysql(values, locked),
            dict(
                params, _traversal=traversal, _phase=phase, _entity=entities[0]
            ),
        )
        if both.rowcount == 2:
            return ([entities[0]] if both.lastrowid == 0 else []), True
    update = statements.record_finish(values, locked=locked)
    if direct.execute(session, update, params).rowcount != 1:
        raise exception.ConcurrentTransaction(
            what="resource %s" % params["_rid"]
        )
    return _decrement(session, traversal, phase, entities)


def _finish_taking_mysql(session, params, values, events, locked, sync, taker):
    """MySQL: a finish that reads its one successor first and, when the
    finish is that successor's last input and ``taker`` wants it locked,
    locks it in the finish's own UPDATE
    (``statements.finish_and_lock_mysql``): a read, the events and one
    UPDATE, where reading and locking after the finish (``_take``) takes
    a SELECT and an UPDATE more. The read is the successor's as
    ``_take`` makes it; a successor that is not ready yet, that the taker
    leaves unlocked or that changed between the read and the UPDATE
    gets what the separate statements give it."""
    traversal, phase, (entity,) = sync
    successor = direct.execute(
        session,
        statements.record_select_counted(),
        {"_rid": entity, "_traversal": traversal, "_phase": phase},
    ).first()
    last = successor is not None and successor.pop("_remaining") == 1
    if not last or not taker.wants(successor):
        fired, found = _finish(session, params, values, events, locked, sync)
        if fired:
            taker.result = (
                [(successor, False)]
                if last
                else _take(session, fired[: taker.limit], traversal, taker)
            )
        return fired, found
    db_api.event_insert(session, *events)
    lock = _lock_values(traversal, taker.owner, params["_now"])
    taken = direct.execute(
        session,
        statements.finish_and_lock_mysql(values, locked, taker.values),
        dict(
            params,
            _traversal=traversal,
            _phase=phase,
            _entity=entity,
            _next_key=successor["atomic_key"],
            _lock_engine=lock["engine_id"],
            _lock_epoch=lock["lock_epoch"],
            **{statements.LOCK_PREFIX + k: v for k, v in taker.values.items()},
        ),
    )
    if taken.rowcount == 3:
        taker.result = [(_as_locked(successor, lock, taker.values), True)]
        return [entity], True
    fired, found = _finish_record(session, params, values, locked, sync)
    if fired:
        taker.result = _take(session, fired[: taker.limit], traversal, taker)
    return fired, found


def _lock_values(traversal, owner, now):
    """The columns a lock for ``owner`` = (engine_id, epoch) writes."""
    return {
        "engine_id": owner[0],
        "lock_epoch": owner[1],
        "lock_traversal": traversal,
        "updated_at": now,
    }


def _as_locked(record, lock, values):
    """``record`` as a lock writing ``lock`` and ``values`` left it."""
    return dict(record, atomic_key=record["atomic_key"] + 1, **lock, **values)


def _durable(owner, taker):
    """Whether a finish's commit waits for PostgreSQL to flush its WAL.

    Not for a record finished without its lock (``owner`` None) in a
    transaction that takes no lock ahead (no ``taker``): nothing outside
    the database was done for it (a lock is taken before any action with
    effects outside: a side-effect-free resource, nothing to do). What a
    database crash could lose of such commits is only the newest ones:
    every commit that does wait (a lock taken before acting, a stack
    marked complete) flushes all the WAL written before it, so whatever
    acted on a lost finish is lost with it, and the stall re-drive
    (``[engine] stall_timeout``) runs the node again.
    ``[database] asynchronous_instant_commits`` off makes every finish
    wait.
    """
    return (
        owner is not None
        or taker is not None
        or not CONF.database.asynchronous_instant_commits
    )


def _in_one(dialect, events, entities):
    """Whether a finish can be one statement: PostgreSQL (DML in CTEs),
    one sync point to decrement and the events as
    ``db_api.event_values`` makes them."""
    return (
        dialect == "postgresql"
        and len(set(entities)) == 1
        and db_api.events_prebuilt(events)
    )


def _finish_in_one(session, statement, params, events, entity, handing=None):
    """The writes of ``resource_finish`` as one statement
    (``statements.finish_in_one``): the same guard and the same
    (fired entities, all sync points found) as its three statements, in
    one round trip; the finished record is appended to ``handing``."""
    params.update(statements.event_parameters(events), _entity=entity)
    db_api.count_events(events)
    row = direct.execute(session, statement, params).dicts()[0]
    finished, remaining = row["finished"], row["remaining"]
    if finished != 1:
        raise exception.ConcurrentTransaction(
            what="resource %s" % params["_rid"]
        )
    if handing is not None:
        prefix = statements.RECORD_PREFIX
        handing.append(
            {
                k[len(prefix) :]: v
                for k, v in row.items()
                if k.startswith(prefix)
            }
        )
    return ([entity] if remaining == 0 else []), remaining is not None


@_retry
def resources_take(record_ids, traversal, taker):
    """Read records and lock some of them for ``traversal``, in one
    transaction (see ``_take``).

    :returns: [(record, locked)].
    """
    with transaction() as session:
        return _take(session, record_ids, traversal, taker)


def _take(session, record_ids, traversal, taker):
    """Read the records ``record_ids`` (with their stack's columns) and
    lock those ``taker.wants(record)`` accepts for ``taker.owner`` =
    (engine_id, epoch), writing ``taker.values``: one SELECT and one
    UPDATE whatever their number, each lock guarded as ``resource_lock``
    guards one (the atomic_key read, nobody holding it, a live owner).

    :returns: [(record, locked)], a locked record as this write left it.
    """
    records = [
        _row(r)
        for r in session.execute(
            statements.records_select(), {"_rids": sorted(set(record_ids))}
        )
    ]
    wanted = {r["id"]: r["atomic_key"] for r in records if taker.wants(r)}
    if not wanted:
        return [(r, False) for r in records]
    engine_id, epoch = taker.owner
    lock = _lock_values(traversal, taker.owner, models.utcnow())
    result = session.execute(
        statements.records_lock(taker.values),
        dict(
            taker.values,
            _keys=sorted(wanted.items()),
            _engine=engine_id,
            _epoch=epoch,
            _traversal=traversal,
            _now=lock["updated_at"],
        ),
    )
    locked = set(wanted)
    if result.rowcount != len(wanted):
        # Some were locked by others meanwhile: which are ours?
        locked = {
            r.id
            for r in session.execute(
                statements.records_select(), {"_rids": sorted(wanted)}
            )
            if (r.engine_id, r.lock_epoch, r.lock_traversal, r.atomic_key)
            == (engine_id, epoch, traversal, wanted[r.id] + 1)
        }
    return [
        (
            _as_locked(r, lock, taker.values) if r["id"] in locked else r,
            r["id"] in locked,
        )
        for r in records
    ]


@_retry
def resource_release(record_id, owner, values, events=()):
    """Release a lock without finishing the node (failure, abort).

    :returns: False (and writes no event) if ``owner`` held no lock.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id, _held_by(owner))
            .values(
                engine_id=None,
                lock_epoch=None,
                lock_traversal=None,
                atomic_key=RESOURCE.c.atomic_key + 1,
                updated_at=models.utcnow(),
                **values,
            )
        )
        if result.rowcount != 1:
            return False
        db_api.event_insert(session, *events)
        return True


@_retry
def resource_replace(
    stack_id,
    traversal,
    old,
    owner,
    new_values,
    old_values=None,
    lock=None,
):
    """Create a replacement version of record ``old`` for ``traversal``.

    Guarded by the traversal (so a superseded worker cannot create one)
    and by the old record's lock (``owner``) or atomic_key. ``lock`` =
    (engine_id, epoch) inserts the new version already locked by that
    engine life for the create that follows (``new_values`` then carry
    the action it starts), if it is live: one transaction instead of a
    replace and a ``resource_lock``.

    Two statements: the INSERT ... SELECT of the new version, which
    carries the stack's traversal guard (``statements.version_insert``:
    the stack row read under a shared lock, so that a traversal starting
    meanwhile waits for this one and plans with the new version, or this
    one sees it and stops), numbers the version and returns it where the
    dialect can; and the switch of the old record's role.

    :returns: the new record, or None if the traversal or the old record
        changed meanwhile (another replacement of it included), or the
        ``lock`` owner is no longer live.
    """
    now = models.utcnow()
    values = dict(new_values, created_at=now, replaces=old["id"])
    if lock is not None:
        values.update(
            engine_id=lock[0],
            lock_epoch=lock[1],
            lock_traversal=traversal,
            atomic_key=1,
            updated_at=now,
        )
    with transaction() as session:
        returning = session.dialect.insert_returning
        try:
            result = session.execute(
                statements.version_insert(values, lock is not None, returning),
                dict(
                    values,
                    _stack=stack_id,
                    _traversal=traversal,
                    _name=old["name"],
                    _engine=lock and lock[0],
                    _epoch=lock and lock[1],
                ),
            )
        except db_exc.DBDuplicateEntry:
            # Replacements of one stack do not queue for each other: the
            # same node run twice at once (a re-drive) numbered the same
            # version, and the other one's insert committed first. The
            # old record is that one's to switch.
            session.rollback()
            return None
        if returning:
            new = _row(result.first())
        elif result.rowcount == 1:
            new = _row(
                session.execute(
                    RESOURCE.select().where(RESOURCE.c.id == result.lastrowid)
                ).first()
            )
        else:
            new = None
        if new is None:
            # The traversal was superseded, or the lock's engine life
            # was claimed.
            session.rollback()
            return None
        old_values = dict(
            old_values or {}, role="replaced", replaced_by=new["id"]
        )
        result = session.execute(
            statements.record_finish(old_values, locked=bool(owner)),
            dict(
                old_values,
                _rid=old["id"],
                _now=now,
                _engine=owner and owner[0],
                _epoch=owner and owner[1],
                _key=old["atomic_key"],
            ),
        )
        if result.rowcount != 1:
            session.rollback()
            return None
        return new


@_retry
def resource_hook_swap(record_id, expected, new, events=()):
    """Set the record's hook state from ``expected`` to ``new`` (CAS).

    :returns: True if this caller changed it.
    """
    with transaction() as session:
        current = (
            RESOURCE.c.hook.is_(None)
            if expected is None
            else RESOURCE.c.hook == expected
        )
        result = session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id, current)
            .values(hook=new)
        )
        if result.rowcount == 1:
            db_api.event_insert(session, *events)
        return result.rowcount == 1


@retry_read
def resource_pending_hook(stack_id, name, hook):
    """The record of resource ``name`` waiting on ``hook``, or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            RESOURCE.select().where(
                RESOURCE.c.stack_id == stack_id,
                RESOURCE.c.name == name,
                RESOURCE.c.hook.like("%s %% pending" % hook),
            )
        ).first()
    return _row(row)


@retry_read
def resource_get_all(stack_id, roles=("current",)):
    """Return the stack's records with one of ``roles``, by name."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(RESOURCE.c.stack_id == stack_id, RESOURCE.c.role.in_(roles))
            .order_by(RESOURCE.c.id)
        )
        return [_row(r) for r in rows]


@retry_read
def resource_versions(stack_id, name):
    """Every stored version of the resource ``name``, oldest first."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(RESOURCE.c.stack_id == stack_id, RESOURCE.c.name == name)
            .order_by(RESOURCE.c.version)
        )
        return [_row(r) for r in rows]


@retry_read
def resources_locked_by(engine_id):
    """Records whose lock is held by ``engine_id``."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select().where(RESOURCE.c.engine_id == engine_id)
        )
        return [_row(r) for r in rows]


def locks_to_recover(engine_id):
    """Locks to look at in one query: those ``engine_id`` holds (in any
    epoch) and those whose holder is no live engine life -- claimed as
    dead, stopped, or an engine restarted since under a newer epoch.

    :returns: records, each with ``holder_live`` (False for the latter).
    """
    live = sa.exists().where(
        SERVICE.c.engine_id == RESOURCE.c.engine_id,
        SERVICE.c.epoch == RESOURCE.c.lock_epoch,
        SERVICE.c.deleted_at.is_(None),
    )
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(RESOURCE, live.label("holder_live")).where(
                RESOURCE.c.engine_id.is_not(None),
                sa.or_(RESOURCE.c.engine_id == engine_id, sa.not_(live)),
            )
        )
        return [_row(r) for r in rows]


@_retry
def resource_steal(record_id, dead_engine_id, atomic_key, values, events=()):
    """Take a lock away from a dead engine (or an orphaned action) if it is
    still the one seen (same ``atomic_key``); True if this caller did."""
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(
                RESOURCE.c.id == record_id,
                RESOURCE.c.engine_id == dead_engine_id,
                RESOURCE.c.atomic_key == atomic_key,
            )
            .values(
                engine_id=None,
                lock_epoch=None,
                lock_traversal=None,
                atomic_key=RESOURCE.c.atomic_key + 1,
                updated_at=models.utcnow(),
                **values,
            )
        )
        if result.rowcount == 1:
            db_api.event_insert(session, *events)
        return result.rowcount == 1


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


# Stack completion ----------------------------------------------------------
@_retry
def stack_finish(
    stack_id, traversal, values, events, purge, delete=False, running=True
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
        if not db_api.stack_update_if_traversal(
            session, stack_id, traversal, values, running=running
        ):
            return False
        db_api.event_insert(session, *events)
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


@retry_read
def stacks_in_progress():
    """Live stacks with an action in progress (for the watchdog)."""
    with transaction(writer=False) as session:
        rows = session.execute(
            STACK.select().where(
                STACK.c.status == "IN_PROGRESS", STACK.c.deleted_at.is_(None)
            )
        )
        return [_row(r) for r in rows]


def progress_marks(stack_ids):
    """What moves when a traversal makes progress, per stack, in one
    query per 500 stacks: every record write bumps its ``atomic_key``, a
    replacement adds a record, and held locks say an action runs.

    :returns: {stack_id: (records, sum of atomic_key, locked records)}.
    """
    result = {}
    with transaction(writer=False) as session:
        for chunk in _chunks(stack_ids):
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
