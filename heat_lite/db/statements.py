"""Prebuilt statements of the engine's per-resource hot path.

Building a Core statement (and its cache key) each time costs more CPU
than sending it: on PostgreSQL an UPDATE of a resource record built per
call took about 0.7 ms of engine CPU, the same statement built once with
bind parameters 0.3 ms. The statements every resource step runs are
therefore built once per shape (the set of columns written) and reused
with parameters. Names of guard parameters start with ``_`` so they never
collide with column names.
"""

import threading

import sqlalchemy as sa

from heat_lite.db import models

STACK = models.Stack.__table__
RESOURCE = models.Resource.__table__
SYNC = models.SyncPoint.__table__
SERVICE = models.Service.__table__
EVENT = models.Event.__table__
EVENT_COLUMNS = tuple(c.name for c in EVENT.c if c.name != "id")
# Statements with one parameter per name or row are prebuilt up to this
# many; more go through Core with expanding parameters.
MAX_PREBUILT_ROWS = 8
# Rows (or keys) sent in one statement at most when there are many.
CHUNK = 500

STACK_COLUMNS = [
    STACK.c.current_traversal.label("stack_traversal"),
    STACK.c.raw_template_id.label("stack_template_id"),
    STACK.c.action.label("stack_action"),
    STACK.c.name.label("stack_name"),
    STACK.c.tenant.label("stack_tenant"),
    STACK.c.trust_id.label("stack_trust"),
]
STACK_KEYS = frozenset(c.name for c in STACK_COLUMNS)

_LOCK = threading.Lock()
_BUILT = {}


def once(key, build):
    statement = _BUILT.get(key)
    if statement is None:
        with _LOCK:
            statement = _BUILT.setdefault(key, build())
    return statement


def chunks(items, size=CHUNK):
    """``items`` in lists of at most ``size``: one statement each."""
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i : i + size]


def stack_select(by_tenant, live):
    """A stack row by ``_id`` (and ``_tenant`` when ``by_tenant``; only
    if not soft-deleted when ``live``): the engine reads one on every
    status poll and at each step of an operation."""

    def build():
        query = STACK.select().where(STACK.c.id == sa.bindparam("_id"))
        if by_tenant:
            query = query.where(STACK.c.tenant == sa.bindparam("_tenant"))
        if live:
            query = query.where(STACK.c.deleted_at.is_(None))
        return query

    return once(("stack", by_tenant, live), build)


def with_stack(where):
    """Records ``where`` selects, each joined with its stack's columns."""
    return (
        sa.select(RESOURCE, *STACK_COLUMNS)
        .join(STACK, STACK.c.id == RESOURCE.c.stack_id)
        .where(where)
    )


def record_select():
    """A record joined with its stack's columns; parameter ``_rid``."""
    return once(
        "record",
        lambda: with_stack(RESOURCE.c.id == sa.bindparam("_rid")),
    )


def record_select_checking(count):
    """``record_select`` that also answers, for ``count`` records
    ``_dep0`` ..., the atomic_key each has if it is converged in
    ``_traversal`` (NULL if not): columns ``_dep_key0`` ... A node
    handed its dependencies' finished rows confirms in its own read that
    they are still what the database holds."""

    def build():
        dep = RESOURCE.alias("dep")
        return with_stack(RESOURCE.c.id == sa.bindparam("_rid")).add_columns(
            *(
                sa.select(dep.c.atomic_key)
                .where(
                    dep.c.id == sa.bindparam("_dep%d" % i),
                    dep.c.converged_traversal == sa.bindparam("_traversal"),
                )
                .scalar_subquery()
                .label("_dep_key%d" % i)
                for i in range(count)
            )
        )

    return once(("record-checking", count), build)


def records_select_ids(count):
    """Record ``_rid`` and ``count`` records ``_dep0`` ..., each joined
    with its stack's columns, in one read (no expanding parameter:
    ``db.direct`` can run it). A node handed the ids of the dependencies
    that just finished reads them along with its own record."""
    return once(
        ("records-ids", count),
        lambda: with_stack(
            RESOURCE.c.id.in_(
                [sa.bindparam("_rid")]
                + [sa.bindparam("_dep%d" % i) for i in range(count)]
            )
        ),
    )


def converged_select():
    """Records of a stack, by name, converged in a traversal; parameters
    ``_stack``, ``_names`` (a list) and ``_traversal``."""
    return once(
        "converged",
        lambda: RESOURCE.select().where(
            RESOURCE.c.stack_id == sa.bindparam("_stack"),
            RESOURCE.c.name.in_(sa.bindparam("_names", expanding=True)),
            RESOURCE.c.converged_traversal == sa.bindparam("_traversal"),
        ),
    )


def converged_select_names(count):
    """``converged_select`` for ``count`` names, as parameters
    ``_name0`` ... (no expanding parameter: ``db.direct`` can run it)."""
    return once(
        ("converged", count),
        lambda: RESOURCE.select().where(
            RESOURCE.c.stack_id == sa.bindparam("_stack"),
            RESOURCE.c.name.in_(
                [sa.bindparam("_name%d" % i) for i in range(count)]
            ),
            RESOURCE.c.converged_traversal == sa.bindparam("_traversal"),
        ),
    )


def event_insert(count):
    """INSERT of ``count`` events in one statement; the parameters of row
    ``i`` are named ``<column>_<i>`` (see ``event_parameters``)."""
    return once(
        ("events", count),
        lambda: EVENT.insert().values(
            [
                {c: sa.bindparam("%s_%d" % (c, i)) for c in EVENT_COLUMNS}
                for i in range(count)
            ]
        ),
    )


def event_parameters(events):
    """The parameters of ``event_insert(len(events))``."""
    params = {}
    for i, event in enumerate(events):
        suffix = "_%d" % i
        for column in EVENT_COLUMNS:
            params[column + suffix] = event.get(column)
    return params


def guard(locked):
    """The record is held by ``_engine`` in epoch ``_epoch`` (``locked``),
    or unlocked with atomic_key ``_key``."""
    if locked:
        return sa.and_(
            RESOURCE.c.engine_id == sa.bindparam("_engine"),
            RESOURCE.c.lock_epoch == sa.bindparam("_epoch"),
        )
    return sa.and_(
        RESOURCE.c.engine_id.is_(None),
        RESOURCE.c.atomic_key == sa.bindparam("_key"),
    )


def engine_live(engine, epoch):
    """The engine life named by parameters ``engine`` and ``epoch`` is
    live (its service row, not claimed): what a lock taken for it
    requires."""
    return sa.exists().where(
        SERVICE.c.engine_id == sa.bindparam(engine),
        SERVICE.c.epoch == sa.bindparam(epoch),
        SERVICE.c.deleted_at.is_(None),
    )


def lock_set(table, columns, engine="_engine", epoch="_epoch", prefix=""):
    """The SET of a lock of ``table``'s row (``RESOURCE`` or an alias of
    it) for engine ``engine`` in epoch ``epoch`` (parameter names) and
    traversal ``_traversal``, writing ``columns`` (parameters ``prefix``
    + column) and ``_now``."""
    values = {
        table.c.engine_id: sa.bindparam(engine),
        table.c.lock_epoch: sa.bindparam(epoch),
        table.c.lock_traversal: sa.bindparam("_traversal"),
        table.c.atomic_key: table.c.atomic_key + 1,
        table.c.updated_at: sa.bindparam("_now"),
    }
    values.update({table.c[c]: sa.bindparam(prefix + c) for c in columns})
    return values


def lockable(table, engine="_engine", epoch="_epoch"):
    """Nobody holds ``table``'s row and the engine life that takes it is
    live."""
    return sa.and_(table.c.engine_id.is_(None), engine_live(engine, epoch))


def record_finish(columns, locked):
    """UPDATE that writes ``columns`` and releases the record.

    Guarded by the lock holder (``_engine`` in epoch ``_epoch``) when
    ``locked``, else by ``_key`` (the atomic_key seen, record unlocked);
    parameters ``_rid``, ``_now`` and one per column.
    """
    columns = tuple(sorted(columns))
    return once(
        ("finish", locked, columns), lambda: finish_update(columns, locked)
    )


def finish_values(columns):
    """The SET of a finish: ``columns`` from parameters of their names,
    the lock released, a new atomic_key."""
    values = {
        RESOURCE.c.engine_id: None,
        RESOURCE.c.lock_epoch: None,
        RESOURCE.c.lock_traversal: None,
        RESOURCE.c.atomic_key: RESOURCE.c.atomic_key + 1,
        RESOURCE.c.updated_at: sa.bindparam("_now"),
    }
    values.update({RESOURCE.c[c]: sa.bindparam(c) for c in columns})
    return values


def finish_update(columns, locked):
    return (
        RESOURCE.update()
        .where(RESOURCE.c.id == sa.bindparam("_rid"), guard(locked))
        .values(finish_values(columns))
    )


def sync_where(single):
    entity = (
        SYNC.c.entity_id == sa.bindparam("_entity")
        if single
        else SYNC.c.entity_id.in_(sa.bindparam("_entities", expanding=True))
    )
    return (
        SYNC.c.traversal_id == sa.bindparam("_traversal"),
        SYNC.c.phase == sa.bindparam("_phase"),
        entity,
    )


def sync_decrement(returning, single=False):
    """Decrement sync points ``_entities`` of ``_traversal``/``_phase``
    (``single``: the one ``_entity``, no expanding parameter, so that
    ``db.direct`` can run it), returning (entity_id, remaining) rows
    when the dialect can."""

    def build():
        update = (
            SYNC.update()
            .where(*sync_where(single))
            .values(remaining=SYNC.c.remaining - 1)
        )
        if returning:
            update = update.returning(SYNC.c.entity_id, SYNC.c.remaining)
        return update

    return once(("decrement", returning, single), build)


def sync_fired_one():
    """The entity ``_entity`` if its sync point reached zero."""
    return once(
        "fired-one",
        lambda: sa.select(SYNC.c.entity_id).where(
            *sync_where(True), SYNC.c.remaining == 0
        ),
    )


def sync_fired():
    """Entities among ``_entities`` whose sync point reached zero."""
    return once(
        "fired",
        lambda: sa.select(SYNC.c.entity_id).where(
            *sync_where(False), SYNC.c.remaining == 0
        ),
    )


def version_insert(columns, locked, returning):
    """INSERT ... SELECT of a new version of a record: ``columns`` from
    parameters of the same names, ``version`` one above every stored
    version of resource ``_name`` of stack ``_stack`` (no SELECT of its
    own before the insert).

    The row comes from the stack's row, and only while ``_traversal`` is
    the stack's current traversal and the stack is not (soft-)deleted:
    the traversal guard is part of the insert. That row is read with a
    shared lock (FOR SHARE; MariaDB: LOCK IN SHARE MODE; SQLite, whose
    writes are serialised, needs none), so that a traversal starting
    meanwhile (its UPDATE of the stack row) waits for this transaction
    and plans with the new version, or this insert, if it comes second,
    sees the new traversal and inserts nothing. Replacements of one stack
    share that lock instead of queueing for an exclusive one. (On MariaDB
    the foreign key's check of the stack row takes that shared lock
    anyway; PostgreSQL's, FOR KEY SHARE, lets a traversal's UPDATE pass.)

    When ``locked`` the version is inserted already locked by engine
    ``_engine`` in epoch ``_epoch`` (``columns`` carry the lock), and only
    if that engine life is live (as ``resource_lock`` requires).
    ``returning`` adds RETURNING of the whole row, saving the SELECT of
    the new record on the dialects that can.
    """
    columns = tuple(sorted(columns))

    def build():
        version = (
            sa.select(sa.func.coalesce(sa.func.max(RESOURCE.c.version), 0) + 1)
            .where(
                RESOURCE.c.stack_id == sa.bindparam("_stack"),
                RESOURCE.c.name == sa.bindparam("_name"),
            )
            .scalar_subquery()
        )
        source = (
            sa.select(
                *(sa.bindparam(c, type_=RESOURCE.c[c].type) for c in columns),
                version,
            )
            .select_from(STACK)
            .where(
                STACK.c.id == sa.bindparam("_stack"),
                STACK.c.current_traversal == sa.bindparam("_traversal"),
                STACK.c.deleted_at.is_(None),
            )
        )
        if locked:
            source = source.where(engine_live("_engine", "_epoch"))
        insert = RESOURCE.insert().from_select(
            list(columns) + ["version"],
            source.with_for_update(read=True, of=STACK),
            include_defaults=False,
        )
        if returning:
            insert = insert.returning(*RESOURCE.c)
        return insert

    return once(("version", locked, returning, columns), build)


def _locking(columns, *where):
    """UPDATE that locks the records ``where`` selects for engine
    ``_engine`` in epoch ``_epoch`` and traversal ``_traversal`` if nobody
    holds them and that engine life is live; it writes ``columns`` (the
    action starting) and ``_now``."""
    return (
        RESOURCE.update()
        .where(*where, lockable(RESOURCE))
        .values(lock_set(RESOURCE, columns))
    )


def record_lock(columns):
    """``_locking`` of record ``_rid`` if it still has atomic_key
    ``_key``."""
    columns = tuple(sorted(columns))
    return once(
        ("lock", columns),
        lambda: _locking(
            columns,
            RESOURCE.c.id == sa.bindparam("_rid"),
            RESOURCE.c.atomic_key == sa.bindparam("_key"),
        ),
    )


def records_select():
    """Records ``_rids`` (a list), each joined with its stack's columns."""
    return once(
        "records",
        lambda: with_stack(
            RESOURCE.c.id.in_(sa.bindparam("_rids", expanding=True))
        ),
    )


def records_lock(columns):
    """``_locking`` of every record whose (id, atomic_key) is in
    ``_keys`` (a list of pairs): one statement for a batch."""
    columns = tuple(sorted(columns))
    return once(
        ("locks", columns),
        lambda: _locking(
            columns,
            sa.tuple_(RESOURCE.c.id, RESOURCE.c.atomic_key).in_(
                sa.bindparam("_keys", expanding=True)
            ),
        ),
    )
