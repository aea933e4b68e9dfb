"""Run one graph node: make a record match the goal, or delete it.

``NodeRunner.run`` is what a worker does for a ``check_resource`` message.
It returns the nodes that became ready because of it (the caller runs one
of them itself and casts the rest). Every step is idempotent: a node that
is stale (older traversal), done, or locked by someone else does nothing;
the holder of a lock re-triggers the record into the newest traversal when
it lets go.

The runner only wires its collaborators, each given what it uses::

    LockTable      the record locks this process holds (lease.py)
    Successors     what a finished node makes ready (successors.py)
    ActionRunner   a plugin's action, its polls and hooks (actions.py)
    Changes        create, adopt, update in place, replace (changes.py)
    UpdatePhase    what an update node does (update_phase.py)
    CleanupPhase   what a cleanup node does (cleanup_phase.py)
    SimpleActions  SUSPEND, RESUME and CHECK (cleanup_phase.py)
    NodeFailures   failing a node something escaped (failures.py)
    Prelocks       cleanup nodes read and locked ahead (prelock.py)
"""

from heat_lite.db import session as db_session
from heat_lite.engine.recovery import fencing
from heat_lite.engine.traversal import graph_cache, ops
from heat_lite.engine.traversal.planner import BARRIER, STACK, UPDATE
from heat_lite.engine.worker import (
    actions,
    changes,
    cleanup_phase,
    failures,
    handon,
    lease,
    prelock,
    successors,
    update_phase,
)
from heat_lite.engine.worker.node import Node


class NodeRunner:
    """Executes nodes for one engine process.

    :param fence: the engine's identity (``recovery.fencing.Fence``): the
        lock owner, and whether the engine may act.
    :param stacks: ``traversal.ops.StackOps``: stack-level nodes, and
        failed resources.
    :param graphs: the process's ``traversal.graph_cache.GraphCache``.
    :param scheduler: the dispatcher (``later``, ``draining``).
    :param services: the plugins' services (``resources.services``).
    """

    def __init__(self, fence, stacks, graphs, scheduler, services):
        self.fence: fencing.Fence = fence
        self.stacks: ops.StackOps = stacks
        self.graphs: graph_cache.GraphCache = graphs
        self.locks: lease.LockTable = lease.LockTable(fence, scheduler)
        self.prelocks: prelock.Prelocks = prelock.Prelocks(self.locks)
        self.successors: successors.Successors = successors.Successors(
            graphs, scheduler, self.prelocks, handon.HandedOn()
        )
        self.actions: actions.ActionRunner = actions.ActionRunner(
            fence,
            self.locks,
            stacks,
            self.successors,
            scheduler,
            rerun=lambda node: self.run(*node),
            services=services,
        )
        simple = cleanup_phase.SimpleActions(
            self.actions, self.locks, self.successors
        )
        self.update_phase: update_phase.UpdatePhase = update_phase.UpdatePhase(
            self.actions,
            changes.Changes(self.actions, self.locks, stacks, self.successors),
            simple,
            self.successors,
        )
        self.cleanup_phase: cleanup_phase.CleanupPhase = (
            cleanup_phase.CleanupPhase(
                self.actions,
                self.locks,
                self.successors,
                simple,
                self.prelocks,
            )
        )
        self.failures: failures.NodeFailures = failures.NodeFailures(
            self.locks, stacks
        )

    def run(self, stack_id, traversal, entity, phase):
        """Run node (entity, phase) of ``traversal``; return next nodes.

        If the database is unavailable at a step after this node took a
        record's lock (a refused connection while the engine lives on),
        the exception unwinds the job that held it; such locks are left
        to the watchdog (``LockTable.forget_unwound``) and the error goes
        on to the dispatcher, which runs the node again later.
        """
        taken, outer = self.locks.tracking()
        try:
            return self._run(stack_id, traversal, entity, phase)
        except Exception as exc:
            if db_session.is_unavailable(exc):
                self.locks.forget_unwound(taken, exc)
            raise
        finally:
            self.locks.stop_tracking(outer)

    def _run(self, stack_id, traversal, entity, phase):
        node = Node(stack_id, traversal, entity, phase)
        if entity == 0:
            if phase == BARRIER:
                return self.stacks.begin_cleanup(stack_id, traversal)
            if phase == STACK:
                self.stacks.mark_complete(stack_id, traversal)
            return []
        if phase == UPDATE:
            return self.update_phase.run(node)
        return self.cleanup_phase.run(node)

    def fail_node(self, stack_id, traversal, entity, phase, exc, logged=False):
        """See ``failures.NodeFailures.fail_node``."""
        return self.failures.fail_node(
            stack_id, traversal, entity, phase, exc, logged
        )

    def retrigger(self, record_id):
        """See ``successors.Successors.retrigger``."""
        return self.successors.retrigger(record_id)

    def active_records(self):
        """Ids of records whose lock an action of this process holds."""
        return self.locks.active_records()

    def take_ahead(self, nodes):
        """Read (and lock) ahead, in one transaction, the cleanup nodes
        among ``nodes`` this process is about to run
        (``prelock.Prelocks.take``)."""
        self.prelocks.take([Node(*n) for n in nodes])

    def holds(self, node):
        """True if ``node`` was read ahead here: it must run here."""
        return self.prelocks.holds(Node(*node))

    def drop_all(self):
        """Forget every action in flight (the engine was fenced or stops):
        their locks are left to the takeover."""
        self.prelocks.drop_all()
        self.locks.drop_all()
