"""Plan a traversal: which record version each resource converges on,
the graph of update nodes, and later the graph of cleanup nodes.

Pure functions over record dicts: the database layer calls them inside the
transaction that starts the traversal, so the plan always matches the
records as they are (including what earlier traversals are still doing).
"""

import collections
import dataclasses
import json
import uuid

from heat_lite.common import exception
from heat_lite.common.states import Action, Role, Status
from heat_lite.db import models
from heat_lite.engine import graph as graph_mod
from heat_lite.engine.drift import revert

UPDATE, CLEANUP, BARRIER, STACK = "update", "cleanup", "barrier", "stack"
# Adopt data key holding a nested stack's resources in a record's data
# until its plugin takes them (see engine.worker.adopt).
ADOPT_NESTED_KEY = "adopt_nested_resources"

# Stack actions that run forwards on every record and have no cleanup.
FORWARD_ONLY = ("RESUME", "CHECK", "SNAPSHOT")


@dataclasses.dataclass
class Plan:
    chosen: dict  # name -> record id of an existing record
    inserts: list  # values of new INIT records
    updates: dict  # record id -> column values


@dataclasses.dataclass
class Built:
    graph: dict
    counts: dict  # (entity_id, phase) -> predecessors to wait for
    leaves: list  # [(entity_id, phase)] ready at once


def _deleted(record):
    return (
        record["action"] == Action.DELETE
        and record["status"] == Status.COMPLETE
    )


def score(record, goal_template_id):
    """How good a record is as the goal's version of its resource.

    The record made for the goal template wins (that is what lets a
    rollback revive a ``replaced`` record and its physical ID); then the
    current one; failed records lose to healthy ones.
    """
    value = 0
    if record["template_id"] == goal_template_id:
        value += 10
    if record["role"] == Role.CURRENT:
        value += 5
    if record["status"] == Status.FAILED:
        value -= 30
    return (value, record["version"])


class TraversalPlanner:
    """Plans the update phase for ``definitions`` (name -> ResourceDef)."""

    def __init__(
        self,
        stack_id,
        goal_template_id,
        definitions,
        keep_roles=False,
        adopt=None,
        revert=None,
    ):
        self.stack_id = stack_id
        # revert_drift: {name: drift report entry} of the drifted
        # resources to converge back (``drift.revert.record_columns``).
        self.revert = revert or {}
        # ADOPT: {name: abandon data entry} prefilling the new records.
        self.adopt = adopt or {}
        self.goal_template_id = goal_template_id
        self.definitions = definitions
        # SUSPEND walks the records without a goal: nothing is demoted.
        self.keep_roles = keep_roles

    def choose(self, records, history_versions=None):
        """Pick one record per goal resource; mark the rest.

        :param records: the stack's records but its ``history`` ones,
            which are never chosen or revived.
        :param history_versions: a callable returning {name: newest
            version among the history rows}, so that a new record is
            numbered after them; called only if a record is to be made.
        """
        if self.keep_roles and not self.definitions:
            return Plan({}, [], {})
        live = [
            r for r in records if not _deleted(r) and r["role"] != Role.HISTORY
        ]
        by_name = collections.defaultdict(list)
        for record in live:
            if record["action"] != Action.DELETE:
                by_name[record["name"]].append(record)
        versions = collections.defaultdict(int)
        if history_versions is not None and not set(self.definitions) <= set(
            by_name
        ):
            versions.update(history_versions())
        for record in records:
            versions[record["name"]] = max(
                versions[record["name"]], record["version"]
            )
        chosen, inserts, updates = {}, [], {}
        for name, defn in self.definitions.items():
            candidates = by_name.get(name)
            if candidates:
                best = max(
                    candidates, key=lambda r: score(r, self.goal_template_id)
                )
                chosen[name] = best["id"]
                if best["role"] != Role.CURRENT or best["replaced_by"]:
                    updates[best["id"]] = {
                        "role": Role.CURRENT,
                        "replaced_by": None,
                    }
                elif name in self.revert:
                    columns = revert.record_columns(best, self.revert[name])
                    if columns:
                        updates[best["id"]] = columns
            else:
                inserts.append(
                    self._new_record(name, defn, versions[name] + 1)
                )
        kept = set(chosen.values())
        for record in live:
            if record["id"] not in kept and record["role"] == Role.CURRENT:
                updates[record["id"]] = {"role": Role.PENDING_DELETE}
        return Plan(chosen, inserts, updates)

    def _new_record(self, name, defn, version):
        record = {
            "uuid": str(uuid.uuid4()),
            "stack_id": self.stack_id,
            "name": name,
            "version": version,
            "role": Role.CURRENT,
            "type": defn.type,
            "action": Action.INIT,
            "status": Status.COMPLETE,
            "status_reason": "",
            "template_id": self.goal_template_id,
            "atomic_key": 0,
            "created_at": models.utcnow(),
        }
        if self.adopt:
            # Every row of one insert needs the same columns.
            record.update(adopt_columns(self.adopt.get(name) or {}))
        return record

    def build(self, ids):
        """Return the update graph over record ids ``ids`` (name -> id)."""
        successors = {ids[name]: [] for name in self.definitions}
        counts = {}
        for name, defn in self.definitions.items():
            node = ids[name]
            counts[(node, UPDATE)] = len(defn.depends)
            for dep in defn.depends:
                successors[ids[dep]].append(node)
        roots = [n for n, succ in successors.items() if not succ]
        counts[(0, BARRIER)] = len(roots)
        leaves = [(n, UPDATE) for n in successors if not counts[(n, UPDATE)]]
        if not successors:
            leaves = [(0, BARRIER)]
        graph = {"update": {str(n): sorted(s) for n, s in successors.items()}}
        return Built(graph, counts, leaves)


def adopt_columns(entry):
    """The columns a new record takes from its abandon data entry."""
    data = dict(entry.get("resource_data") or {})
    if entry.get("resources") is not None:
        data[ADOPT_NESTED_KEY] = entry["resources"]
    return {
        "physical_resource_id": entry.get("resource_id") or None,
        "rsrc_data": json.dumps(data),
        "rsrc_metadata": (
            json.dumps(entry["metadata"]) if entry.get("metadata") else None
        ),
    }


def plan_cleanup(records):
    """Return (graph, counts) deleting ``records`` in reverse order.

    A record is deleted after every record that required it, and a
    replaced record after its replacement. Should requirement edges form a
    cycle (possible across versions made by different templates), they
    are dropped and only the replacement edges are kept.
    """
    g = _cleanup_graph(records, with_requires=True)
    try:
        g.topological_order()
    except exception.CircularDependencyException:
        g = _cleanup_graph(records, with_requires=False)
    successors = {n: sorted(g.required_by(n)) for n in g}
    counts = {(n, CLEANUP): len(g.requires(n)) for n in g}
    counts[(0, STACK)] = len([n for n, s in successors.items() if not s])
    graph = {str(n): s for n, s in successors.items()}
    return graph, counts


def _cleanup_graph(records, with_requires):
    ids = {r["id"] for r in records}
    g = graph_mod.Graph()
    for record in records:
        g.add_node(record["id"])
        if record["replaces"] in ids:
            g.add_edge(record["replaces"], record["id"])
        if with_requires:
            for required in json.loads(record["requires"] or "[]"):
                if required in ids and required != record["id"]:
                    g.add_edge(required, record["id"])
    return g


def cleanup_leaves(counts):
    leaves = [(n, p) for (n, p), c in counts.items() if p == CLEANUP and not c]
    return leaves or [(0, STACK)]
