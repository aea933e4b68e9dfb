"""The records an update node's finish hands on (``worker.handon``)."""

from heat_lite.engine.worker import handon
from heat_lite.engine.worker.node import Node


def _node(entity, traversal="t"):
    return Node("s", traversal, entity, "update")


def test_a_record_is_handed_to_each_successor_once():
    handed = handon.HandedOn()
    # A whole row (PostgreSQL's finish returns it) or an id alone.
    a, b = {"name": "a", "id": 1, "atomic_key": 2}, {"id": 2}
    handed.give(_node(1), a, [3, 4])
    handed.give(_node(2), b, [3])
    assert handed.take(_node(3)) == {1: a, 2: b}
    assert handed.take(_node(3)) == {}
    assert handed.take(_node(4)) == {1: a}
    # Another traversal's node of the same entity got nothing.
    handed.give(_node(1), a, [5])
    assert handed.take(_node(5, traversal="u")) == {}


def test_the_oldest_are_dropped_beyond_the_limit():
    handed = handon.HandedOn(limit=3)
    for entity in range(5):
        handed.give(_node(entity), {"id": entity}, [entity + 100])
    assert len(handed) == 3
    assert handed.take(_node(100)) == {}
    assert handed.take(_node(104)) == {4: {"id": 4}}
