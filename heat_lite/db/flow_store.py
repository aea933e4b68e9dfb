"""taskflow's persistence, in our database (the rollouts' flows).

taskflow's own SQLAlchemy backend, handed our engine (oslo.db's writer)
instead of a connection URL of its own; its tables are created by our
migration 0008, never by its ``upgrade()`` (its alembic history would
share our ``alembic_version`` table). Each flow has a logbook and a flow
detail whose uuids are the rollout's id.

On SQLite its writes take our process-wide write lock, as ours do.
Writes are fenced: before taskflow saves an atom's or the flow's state,
``guard()`` must pass (the engine still owns the rollout), else it raises
and the taskflow engine stops at once, without reverting anything, so an
engine claimed as dead never records progress over its successor's.
"""

import contextlib
import json

from taskflow import exceptions as tf_exceptions
from taskflow import storage
from taskflow.persistence import models as tf_models
from taskflow.persistence.backends import impl_sqlalchemy

from heat_lite.db import session as db_session


class _FencedConnection(impl_sqlalchemy.Connection):
    def __init__(self, backend, upgrade_lock, guard):
        super().__init__(backend, upgrade_lock)
        self._guard = guard
        # {atom uuid: what was last written of it, progress left out}
        self._written = {}

    def update_atom_details(self, atom_detail):
        key = _without_progress(atom_detail)
        if self._written.get(atom_detail.uuid) == key:
            # Only the progress moved: taskflow writes 0.0 right after
            # RUNNING and 1.0 right after SUCCESS, a transaction each, and
            # nothing reads it back (a resumed task runs again anyway).
            return atom_detail
        self._guard()
        with db_session.write_lock():
            written = super().update_atom_details(atom_detail)
        self._written[atom_detail.uuid] = key
        return written

    def _update_atom_details(self, conn, ad, e_ad):
        """taskflow's, without the UPDATE when the row holds the atom
        already: a save of the flow (its state: RUNNING, SUCCESS) goes
        through every atom of it, one UPDATE each, most unchanged."""
        before = e_ad.to_dict()
        e_ad.merge(ad)
        after = e_ad.to_dict()
        if after != before:
            atoms = self._tables.atomdetails
            conn.execute(
                atoms.update().where(atoms.c.uuid == e_ad.uuid).values(after)
            )

    def update_flow_details(self, flow_detail):
        self._guard()
        with db_session.write_lock():
            return super().update_flow_details(flow_detail)

    def save_logbook(self, book):
        self._guard()
        with db_session.write_lock():
            return super().save_logbook(book)


def _without_progress(atom_detail):
    data = atom_detail.to_dict()
    data["meta"] = {
        k: v
        for k, v in (data.get("meta") or {}).items()
        if k not in (storage.META_PROGRESS, storage.META_PROGRESS_DETAILS)
    }
    return json.dumps(data, sort_keys=True, default=repr)


class FencedBackend(impl_sqlalchemy.SQLAlchemyBackend):
    """taskflow's SQLAlchemy backend on our engine, writes guarded.

    :param guard: callable raising when this engine may no longer write.
    """

    def __init__(self, guard):
        super().__init__({}, engine=db_session.get_engine())
        self._guard = guard
        self._connection = None

    def get_connection(self):
        """One connection for the backend's life: taskflow asks for one
        at every save, and each new one builds taskflow's tables anew --
        new Table objects, so SQLAlchemy compiled every statement again
        (most of a rollout's own CPU). It holds no state of its own (each
        call opens a transaction on the engine) and its ``close`` does
        nothing, so the threads of a parallel engine share it."""
        if self._connection is None:
            self._connection = _FencedConnection(
                self, self._upgrade_lock, self._guard
            )
        return self._connection


def flow_detail(backend, flow_id, name):
    """(logbook, flow detail) of flow ``flow_id``, created if new."""
    with contextlib.closing(backend.get_connection()) as conn:
        try:
            book = conn.get_logbook(flow_id)
        except tf_exceptions.NotFound:
            book = tf_models.LogBook(name, uuid=flow_id)
            book.add(tf_models.FlowDetail(name, uuid=flow_id))
            conn.save_logbook(book)
            book = conn.get_logbook(flow_id)
        return book, book.find(flow_id)
