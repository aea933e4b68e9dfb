"""Records an update node's finish hands on to the nodes it makes ready.

In a chain every update node reads the record it depends on right after
that record's finish wrote it, usually in the same process. The finish
hands the record on (``db.finish.resource_finish``'s ``handing``): on
PostgreSQL the record as it left it, elsewhere its id alone. The process
keeps it for the successors of the node, and a successor's own read
takes the dependency in the same statement (``db.records.node_load``:
PostgreSQL confirms the handed row by its atomic_key, the others read
the id along with the record; either way only if it is still converged
in the traversal) instead of reading it by name in a statement of its
own. A record the database no longer holds as handed (a commit lost in
a database crash, a later write) fails that check and is read as
before, so what is kept here is only ever a hint: losing it, or the
process, costs a read.
"""

import collections
import threading

# Entries kept; the oldest are dropped first (a node that never ran
# here: its successor was run by another process).
LIMIT = 4096


class HandedOn:
    """{(traversal, successor entity): {record id: finished record}}."""

    def __init__(self, limit=LIMIT):
        self.limit = limit
        self._held = collections.OrderedDict()
        self._lock = threading.Lock()

    def give(self, node, record, successors):
        """``record`` (finished by ``node``) for each of ``successors``
        (entity ids in ``node``'s traversal)."""
        with self._lock:
            for entity in successors:
                key = (node.traversal, entity)
                handed = self._held.get(key)
                if handed is None:
                    handed = self._held[key] = {}
                handed[record["id"]] = record
            while len(self._held) > self.limit:
                self._held.popitem(last=False)

    def take(self, node):
        """What was handed to ``node`` ({record id: record}, maybe
        empty)."""
        with self._lock:
            return self._held.pop((node.traversal, node.entity), {})

    def __len__(self):
        return len(self._held)
