"""The hot path's writes in portable SQL, and the interface each
dialect's implementation keeps.

``Writes`` is what ``db.finish``, ``db.records`` and ``db.traversals``
call: a node's finish (its record, events and sync points, and the
successors it takes), the decrement of sync points, a record's new
version and a traversal's new records. Written here as any SQL database
runs them; ``postgresql.PostgreSQL`` and ``mysql.MySQL`` override what
their database does in fewer round trips. What a driver can or cannot
return (``UPDATE ... RETURNING``, ``INSERT ... RETURNING``) is looked at
once, when the object is made (``dialects.writes``), never per call.
"""

from heat_lite.common import exception
from heat_lite.db import direct, locks, models, statements
from heat_lite.db import events as db_events
from heat_lite.db.session import as_dict
from heat_lite.db.sync_points import BARRIER, STACK_PHASE

RESOURCE = models.Resource.__table__


class Finish:
    """One node's finish, as ``finish.resource_finish`` was asked it.

    :param owner: (engine_id, epoch) holding the record's lock, or None:
        the finish is then guarded by ``atomic_key`` (never locked).
    :param successors: entity ids in ``phase`` whose sync points it
        decrements; none: the phase's join.
    :param taker: reads and locks the successors that fired
        (``worker.prelock.Taker``); its ``result`` gets them.
    :param handing: a list that gets what the successors made ready may
        read instead of the record (``worker.handon``).
    """

    __slots__ = (
        "record_id",
        "owner",
        "values",
        "events",
        "traversal",
        "phase",
        "entities",
        "successors",
        "taker",
        "handing",
        "params",
    )

    def __init__(
        self,
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
        engine_id, epoch = owner or (None, None)
        self.record_id = record_id
        self.owner = owner
        self.values = values
        self.events = events
        self.traversal = traversal
        self.successors = successors
        # The sync points to decrement: the successors', or the join's.
        if successors:
            self.phase, self.entities = phase, successors
        else:
            self.phase = BARRIER if phase == "update" else STACK_PHASE
            self.entities = [0]
        self.taker = taker
        self.handing = handing
        # The parameters of the record's UPDATE (``statements.guard``).
        self.params = dict(
            values,
            _rid=record_id,
            _now=models.utcnow(),
            _engine=engine_id,
            _epoch=epoch,
            _key=atomic_key,
        )

    @property
    def locked(self):
        """Guarded by the lock (else by the atomic_key)."""
        return bool(self.owner)

    @property
    def single(self):
        """One sync point to decrement (``entities[0]``)."""
        return len(set(self.entities)) == 1


class Writes:
    """The hot path's writes for one database (here: portable SQL).

    :param dialect: the SQLAlchemy dialect of the configured engine, asked
        once what its driver can return.
    """

    def __init__(self, dialect):
        # What the driver can return instead of a statement more.
        self._update_returning = dialect.update_returning
        self._version_returning = dialect.insert_returning
        self._records_returning = dialect.insert_executemany_returning

    # The finish of a node ---------------------------------------------------
    def finish_is_one_statement(self, finish: Finish) -> bool:
        """Whether ``finish`` is one statement, atomic by itself
        (``session.transaction(single=True)``)."""
        return False

    def finish(self, session, finish: Finish):
        """Write ``finish`` inside ``session``'s transaction: its events,
        its record (guarded by the lock or the atomic_key) and its sync
        points; with a taker, read and lock the successors it fired.

        :returns: (fired entity ids, all sync points found).
        :raises ConcurrentTransaction: if the guard matched nothing.
        """
        fired, found = self.finish_writes(session, finish)
        if finish.handing is not None:
            # No row to hand on: its id, read along with the successor's
            # own record (``records.node_load``).
            finish.handing.append({"id": finish.record_id})
        self.take_fired(session, finish, fired)
        return fired, found

    def finish_writes(self, session, finish: Finish):
        """The events (rolled back with the transaction if the guard then
        fails), then the record and the sync points."""
        db_events.event_insert(session, *finish.events)
        return self.finish_record(session, finish)

    def finish_record(self, session, finish: Finish):
        """The record's UPDATE, then the decrement of its sync points."""
        update = statements.record_finish(finish.values, finish.locked)
        if direct.execute(session, update, finish.params).rowcount != 1:
            raise exception.ConcurrentTransaction(
                what="resource %s" % finish.record_id
            )
        return self.decrement(
            session, finish.traversal, finish.phase, finish.entities
        )

    def take_fired(self, session, finish: Finish, fired):
        """Read (and lock what the taker wants of) the successors that
        ``fired``, at most ``taker.limit`` of them."""
        taker = finish.taker
        if taker is not None and fired and finish.successors:
            taker.result = locks.take(
                session, fired[: taker.limit], finish.traversal, taker
            )

    # Sync points -------------------------------------------------------------
    def decrement(self, session, traversal, phase, entities):
        """Decrement sync points; return (fired entity ids, all found)."""
        if not entities:
            return [], True
        params = {"_traversal": traversal, "_phase": phase}
        if len(set(entities)) == 1:
            # The usual case (one successor, or the join): a prebuilt
            # statement on the cursor.
            return self._decrement_one(session, params, entities[0])
        params["_entities"] = sorted(entities)
        fired, found = self._decrement_many(session, params)
        return sorted(fired), found == len(set(entities))

    def _decrement_one(self, session, params, entity):
        params["_entity"] = entity
        if self._update_returning:
            result = direct.execute(
                session, statements.sync_decrement(True, single=True), params
            )
            if not result.rows:
                return [], False
            return ([entity] if result.rows[0][1] == 0 else []), True
        result = direct.execute(
            session, statements.sync_decrement(False, single=True), params
        )
        if result.rowcount != 1:
            return [], False
        fired = direct.execute(session, statements.sync_fired_one(), params)
        return ([entity] if fired.rows else []), True

    def _decrement_many(self, session, params):
        """(fired entity ids, sync points found) of ``_entities``."""
        if self._update_returning:
            rows = session.execute(
                statements.sync_decrement(True), params
            ).all()
            return [e for e, remaining in rows if remaining == 0], len(rows)
        found = session.execute(
            statements.sync_decrement(False), params
        ).rowcount
        fired = session.execute(statements.sync_fired(), params).scalars()
        return list(fired), found

    # New rows ----------------------------------------------------------------
    def insert_version(self, session, values, locked, params):
        """Run ``statements.version_insert`` of ``values``; return the new
        version's row, or None if its guards matched nothing. Where the
        driver cannot return the inserted row, it is read by its id."""
        returning = self._version_returning
        result = session.execute(
            statements.version_insert(values, locked, returning), params
        )
        if returning:
            return as_dict(result.first())
        if result.rowcount != 1:
            return None
        return as_dict(
            session.execute(
                RESOURCE.select().where(RESOURCE.c.id == result.lastrowid)
            ).first()
        )

    def insert_records(self, session, rows):
        """Insert new records in batches; return {name: id}.

        One multi-row INSERT ... RETURNING per batch where the driver can
        (PostgreSQL, SQLite and MariaDB), else one INSERT per record.
        """
        ids = {}
        for chunk in statements.chunks(rows):
            if self._records_returning:
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
                    result = session.execute(
                        RESOURCE.insert().values(**values)
                    )
                    ids[values["name"]] = result.inserted_primary_key[0]
        return ids
