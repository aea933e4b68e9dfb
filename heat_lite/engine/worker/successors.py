"""What comes after a node: its successors made ready, or the record
offered to the stack's newest traversal when this one was superseded."""

import logging

from heat_lite.common import exception
from heat_lite.db import finish as db_finish
from heat_lite.db import records as db_records
from heat_lite.db import session as db_session
from heat_lite.db import sync_points as db_sync_points
from heat_lite.engine.traversal import graph_cache
from heat_lite.engine.traversal.planner import UPDATE
from heat_lite.engine.worker import dispatch, handon, prelock
from heat_lite.engine.worker.node import Node

LOG = logging.getLogger(__name__)
# Seconds before an offer the database refused is made again.
RETRY_SECONDS = 1.0


class Successors:
    """Next nodes, read from the traversal graphs.

    :param graphs: the process's ``traversal.graph_cache.GraphCache``.
    """

    def __init__(self, graphs, scheduler=None, prelocks=None, handed=None):
        self.graphs: graph_cache.GraphCache = graphs
        self.scheduler: dispatch.Dispatcher | None = scheduler
        # A cleanup node's finish reads (and locks) the successors it
        # makes ready, for this worker to run next.
        self.prelocks: prelock.Prelocks | None = prelocks
        # An update node's finished record, kept for the successors it
        # depends on.
        self.handed: handon.HandedOn | None = handed

    def of(self, node):
        """Successor entity ids of ``node`` in its traversal's graph."""
        return self.graphs.successors(node.traversal, node.entity, node.phase)

    def after(self, record, node, fired, superseded):
        """The nodes a finished node made ready (``fired``), or the
        record's node in the newest traversal if ``superseded``.

        Running the node again cannot redo that offer (the node is done),
        so an unavailable database retries the offer itself, later.
        """
        if superseded:
            try:
                return self.retrigger(record["id"])
            except Exception as exc:
                if self.scheduler is None or not db_session.is_unavailable(
                    exc
                ):
                    raise
                LOG.warning(
                    "Database unavailable while offering resource %s to "
                    "its stack's newest traversal; again in %ss: %s",
                    record["id"],
                    RETRY_SECONDS,
                    exc,
                )
                self.scheduler.later(
                    RETRY_SECONDS, lambda: self.retrigger(record["id"])
                )
                return []
        return [node.sibling(entity, phase) for entity, phase in fired]

    def finish(self, node, record_id, atomic_key, owner, values, events):
        """``db_finish.resource_finish`` of ``node`` (see there); the cleanup
        nodes it makes ready are read, and locked, in its transaction
        (``prelock``); an update node's finished record is handed on to
        its successors (``handon``)."""
        prelocks = self.prelocks
        taker = prelocks.taker(node) if prelocks is not None else None
        successors = self.of(node)
        handing = (
            []
            if self.handed is not None and successors and node.phase == UPDATE
            else None
        )
        try:
            done = db_finish.resource_finish(
                record_id,
                atomic_key,
                owner,
                values,
                events,
                node.traversal,
                node.phase,
                successors,
                taker=taker,
                handing=handing,
            )
        except Exception:
            if taker is not None:
                prelocks.abandon(taker)
            raise
        if taker is not None:
            prelocks.keep(taker)
        if handing:
            self.handed.give(node, handing[0], successors)
        return done

    def finish_unlocked(self, node, record, values):
        """Finish a node that runs no action (nothing to do, already
        deleted, never made) in one write guarded by ``atomic_key``; a
        record changed meanwhile is looked at again."""
        try:
            fired, superseded = self.finish(
                node, record["id"], record["atomic_key"], None, values, []
            )
        except exception.ConcurrentTransaction:
            return self.retrigger(record["id"])
        return self.after(record, node, fired, superseded)

    def retrigger(self, record_id):
        """Offer a record that was busy to the stack's newest traversal.

        :returns: its node in that traversal if the node is ready.
        """
        record = db_records.resource_load(record_id)
        if record is None or not record["stack_traversal"]:
            return []
        traversal = record["stack_traversal"]
        found = self.graphs.node_of(traversal, record)
        if found is None:
            return []
        entity, phase = found
        if db_sync_points.sync_point_remaining(traversal, entity, phase) == 0:
            return [Node(record["stack_id"], traversal, entity, phase)]
        return []
