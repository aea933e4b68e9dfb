"""A graph node of one traversal, as a value.

A node is (stack_id, traversal, entity, phase): ``entity`` is a record
id (or 0 for the stack's own nodes) and ``phase`` is ``update`` or
``cleanup`` (``traversal.planner``). It is what the dispatcher runs and
casts, and what every step of a worker is given instead of a record id,
a traversal and a phase passed separately.
"""

from typing import NamedTuple


class Node(NamedTuple):
    stack_id: str
    traversal: str
    entity: int
    phase: str

    def sibling(self, entity, phase):
        """Another node of the same traversal."""
        return Node(self.stack_id, self.traversal, entity, phase)
