"""A per-process cache of traversal graphs (immutable once written)."""

import collections
import threading

from heat_lite.db import traversals as db_traversals
from heat_lite.engine.traversal.planner import CLEANUP, UPDATE


class GraphCache:
    """Successor lists of the traversals this engine is working on."""

    def __init__(self, size=64):
        self._size = size
        self._lock = threading.Lock()
        self._graphs = collections.OrderedDict()

    def _get(self, traversal, need_cleanup=False):
        with self._lock:
            entry = self._graphs.get(traversal)
        if entry is None or (need_cleanup and entry[CLEANUP] is None):
            row = db_traversals.traversal_get(traversal)
            if row is None:
                return None
            entry = {
                UPDATE: {int(k): v for k, v in row["graph"]["update"].items()},
                CLEANUP: (
                    {int(k): v for k, v in row["cleanup_graph"].items()}
                    if row["cleanup_graph"] is not None
                    else None
                ),
                "verify": bool(row["graph"].get("verify")),
            }
            with self._lock:
                self._graphs[traversal] = entry
                while len(self._graphs) > self._size:
                    self._graphs.popitem(last=False)
        return entry

    def successors(self, traversal, node, phase):
        """Successor entity ids of (node, phase); [] for a phase root or
        when the traversal is gone (the join's decrement then reports the
        traversal as superseded)."""
        entry = self._get(traversal, need_cleanup=phase == CLEANUP)
        if entry is None or entry[phase] is None:
            return []
        return entry[phase].get(node, [])

    def verified(self, traversal):
        """True if ``traversal`` carries a ``verify`` document."""
        entry = self._get(traversal)
        return bool(entry and entry["verify"])

    def node_of(self, traversal, record):
        """The (entity, phase) that stands for ``record`` in traversal."""
        entry = self._get(traversal)
        if entry is None:
            return None
        if record["id"] in entry[UPDATE]:
            return record["id"], UPDATE
        if record["replaces"] in entry[UPDATE] and record["role"] == "current":
            return record["replaces"], UPDATE
        entry = self._get(traversal, need_cleanup=True)
        if (
            entry is not None
            and entry[CLEANUP] is not None
            and record["id"] in entry[CLEANUP]
        ):
            return record["id"], CLEANUP
        return None
