"""MySQL and MariaDB: multiple-table UPDATEs and LAST_INSERT_ID(expr).

Neither has ``UPDATE ... RETURNING``. A sync point's new count comes back
through ``LAST_INSERT_ID(expr)`` in the statement's OK packet instead of
a SELECT; a finish's record and its one sync point are one UPDATE of
both rows (``statements.finish_with_sync_mysql``); a cleanup finish that
is the last input of its one successor also locks that successor in the
same UPDATE (``statements.finish_and_lock_mysql``).
"""

from heat_lite.db import direct, locks, statements
from heat_lite.db import events as db_events
from heat_lite.db.dialects import base


class MySQL(base.Writes):
    """``base.Writes`` with fewer statements a finish."""

    def finish(self, session, finish: base.Finish):
        taker = finish.taker
        if taker is None or taker.limit <= 0 or len(finish.successors) != 1:
            return super().finish(session, finish)
        return self._finish_taking(session, finish)

    def finish_record(self, session, finish: base.Finish):
        """The record and its one sync point in one UPDATE; only when it
        matches nothing are the two statements run to tell a lost guard
        from a gone traversal."""
        if finish.single:
            entity = finish.entities[0]
            both = direct.execute(
                session,
                statements.finish_with_sync_mysql(
                    finish.values, finish.locked
                ),
                dict(
                    finish.params,
                    _traversal=finish.traversal,
                    _phase=finish.phase,
                    _entity=entity,
                ),
            )
            if both.rowcount == 2:
                return ([entity] if both.lastrowid == 0 else []), True
        return super().finish_record(session, finish)

    def _decrement_one(self, session, params, entity):
        # The new count handed back in the OK packet instead of a SELECT.
        result = direct.execute(
            session,
            statements.sync_decrement_last_insert_id(),
            dict(params, _entity=entity),
        )
        if result.rowcount != 1:
            return [], False
        return ([entity] if result.lastrowid == 0 else []), True

    def _finish_taking(self, session, finish: base.Finish):
        """A finish that reads its one successor first and, when the
        finish is that successor's last input and the taker wants it
        locked, locks it in the finish's own UPDATE
        (``statements.finish_and_lock_mysql``): a read, the events and one
        UPDATE, where reading and locking after the finish
        (``take_fired``) takes a SELECT and an UPDATE more. The read is
        the successor's as ``locks.take`` makes it; a successor that is
        not ready yet, that the taker leaves unlocked or that changed
        between the read and the UPDATE gets what the separate statements
        give it."""
        taker, (entity,) = finish.taker, finish.entities
        successor = direct.execute(
            session,
            statements.record_select_counted(),
            {
                "_rid": entity,
                "_traversal": finish.traversal,
                "_phase": finish.phase,
            },
        ).first()
        last = successor is not None and successor.pop("_remaining") == 1
        if not last or not taker.wants(successor):
            fired, found = self.finish_writes(session, finish)
            if fired and last:
                taker.result = [(successor, False)]
            else:
                self.take_fired(session, finish, fired)
            return fired, found
        db_events.event_insert(session, *finish.events)
        lock = locks.lock_values(
            finish.traversal, taker.owner, finish.params["_now"]
        )
        taken = direct.execute(
            session,
            statements.finish_and_lock_mysql(
                finish.values, finish.locked, taker.values
            ),
            dict(
                finish.params,
                _traversal=finish.traversal,
                _phase=finish.phase,
                _entity=entity,
                _next_key=successor["atomic_key"],
                _lock_engine=lock["engine_id"],
                _lock_epoch=lock["lock_epoch"],
                **{
                    statements.LOCK_PREFIX + k: v
                    for k, v in taker.values.items()
                },
            ),
        )
        if taken.rowcount == 3:
            taker.result = [
                (locks.as_locked(successor, lock, taker.values), True)
            ]
            return [entity], True
        fired, found = self.finish_record(session, finish)
        self.take_fired(session, finish, fired)
        return fired, found
