import pytest

from heat_lite.common import exception
from heat_lite.engine import graph


def _graph(edges, nodes=()):
    g = graph.Graph()
    for n in nodes:
        g.add_node(n)
    for a, b in edges:
        g.add_edge(a, b)
    return g


def test_topological_order_puts_requirements_first():
    g = _graph([("web", "db"), ("db", "net"), ("web", "net")], ["lonely"])
    order = g.topological_order()
    assert order.index("net") < order.index("db") < order.index("web")
    assert set(order) == {"web", "db", "net", "lonely"}
    assert g.reverse_order().index("web") < g.reverse_order().index("net")


def test_leaves_and_roots():
    g = _graph([("b", "a"), ("c", "b")])
    assert g.leaves() == ["a"]
    assert g.roots() == ["c"]


def test_cycle_names_its_members():
    g = _graph([("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")])
    with pytest.raises(exception.CircularDependencyException) as err:
        g.topological_order()
    message = str(err.value)
    assert message.startswith("Circular Dependency Found: ")
    for name in ("a", "b", "c"):
        assert name in message
    assert "d" not in message.split(": ", 1)[1]
