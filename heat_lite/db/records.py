"""Versioned resource records: the reads of a node and the writes of its
record other than the lock (``db.locks``) and the finish (``db.finish``).

A record is one version of a resource; a replacement inserts a new
version (``resource_replace``). Every write of a record bumps its
``atomic_key``, and a write that must not race is conditional on it or
on the lock's holder (see ``db.locks``).
"""

from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.db import dialects, direct, locks, models, statements
from heat_lite.db import events as db_events
from heat_lite.db import session as db_session
from heat_lite.db.session import as_dict, retry_read, retry_write, transaction

RESOURCE = models.Resource.__table__


# Reads of a node -------------------------------------------------------------
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
    return {r.name: as_dict(r) for r in rows}


@retry_read
def resources_converged(stack_id, names, traversal):
    """Return {name: record} of records converged in ``traversal``."""
    if not names:
        return {}
    with transaction(writer=False) as session:
        return _converged(session, stack_id, names, traversal)


# Writes ----------------------------------------------------------------------
@retry_write
def resource_progress(record_id, owner, values, events=()):
    """Write progress of a record locked by ``owner`` (physical id, data,
    events).

    :raises ConcurrentTransaction: if ``owner`` lost the lock.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(RESOURCE.c.id == record_id, locks.held_by(owner))
            .values(**values)
        )
        if result.rowcount != 1:
            raise exception.ConcurrentTransaction(
                what="resource %s" % record_id
            )
        db_events.event_insert(session, *events)


@retry_write
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
    writes: dialects.Writes = dialects.writes()
    with transaction() as session:
        try:
            new = writes.insert_version(
                session,
                values,
                lock is not None,
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
        # None: the traversal was superseded, or the lock's engine life
        # was claimed.
        if new is None or not _replaced(
            session, old, owner, old_values, new["id"], now
        ):
            session.rollback()
            return None
        return new


def _replaced(session, old, owner, values, new_id, now):
    """Make record ``old`` ``replaced`` by record ``new_id`` (writing
    ``values``), guarded by its lock (``owner``) or its atomic_key; True
    if it was."""
    values = dict(values or {}, role="replaced", replaced_by=new_id)
    result = session.execute(
        statements.record_finish(values, locked=bool(owner)),
        dict(
            values,
            _rid=old["id"],
            _now=now,
            _engine=owner and owner[0],
            _epoch=owner and owner[1],
            _key=old["atomic_key"],
        ),
    )
    return result.rowcount == 1


@retry_write
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
            db_events.event_insert(session, *events)
        return result.rowcount == 1


def resource_set_if_unlocked(record_id, atomic_key, values, events=()):
    """Write ``values`` to a record nobody holds a lock on, if it is still
    the version seen (``atomic_key``); insert ``events`` with it.

    Used by API-driven changes of a resource at rest (mark unhealthy,
    signals).

    :returns: True if written, False if locked or changed meanwhile.
    """
    with transaction() as session:
        result = session.execute(
            RESOURCE.update()
            .where(
                RESOURCE.c.id == record_id,
                RESOURCE.c.atomic_key == atomic_key,
                RESOURCE.c.engine_id.is_(None),
            )
            .values(
                atomic_key=atomic_key + 1, updated_at=models.utcnow(), **values
            )
        )
        if result.rowcount != 1:
            return False
        db_events.event_insert(session, *events)
        return True


# Reads of a stack's records ------------------------------------------------
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
    return as_dict(row)


@retry_read
def resource_get_all(stack_id, roles=("current",)):
    """Return the stack's records with one of ``roles``, by name."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(RESOURCE.c.stack_id == stack_id, RESOURCE.c.role.in_(roles))
            .order_by(RESOURCE.c.id)
        )
        return [as_dict(r) for r in rows]


@retry_read
def resource_versions(stack_id, name):
    """Every stored version of the resource ``name``, oldest first."""
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(RESOURCE.c.stack_id == stack_id, RESOURCE.c.name == name)
            .order_by(RESOURCE.c.version)
        )
        return [as_dict(r) for r in rows]


@retry_read
def resources_of_stacks(stack_ids, roles=("current",)):
    """The records with one of ``roles`` of several stacks, one query.

    :returns: {stack_id: [record, ...]} in record id order.
    """
    result = {stack_id: [] for stack_id in stack_ids}
    if not result:
        return result
    with transaction(writer=False) as session:
        rows = session.execute(
            RESOURCE.select()
            .where(
                RESOURCE.c.stack_id.in_(list(result)),
                RESOURCE.c.role.in_(roles),
            )
            .order_by(RESOURCE.c.id)
        )
        for row in rows:
            result[row.stack_id].append(as_dict(row))
    return result
