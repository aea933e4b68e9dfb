"""A pure dependency graph: nodes, edges, topological and reverse order.

Nodes are any hashable values. ``add_edge(a, b)`` means *a requires b*: b
must be done before a starts. Nothing here touches the database or RPC.
"""

import collections

from heat_lite.common import exception


class Graph:
    """A directed graph of requirements."""

    def __init__(self):
        self._requires = collections.OrderedDict()
        self._required_by = collections.OrderedDict()

    def add_node(self, node):
        self._requires.setdefault(node, set())
        self._required_by.setdefault(node, set())

    def add_edge(self, node, requirement):
        """``node`` requires ``requirement``."""
        self.add_node(node)
        self.add_node(requirement)
        self._requires[node].add(requirement)
        self._required_by[requirement].add(node)

    def __contains__(self, node):
        return node in self._requires

    def __len__(self):
        return len(self._requires)

    def __iter__(self):
        return iter(self._requires)

    def requires(self, node):
        return self._requires[node]

    def required_by(self, node):
        return self._required_by[node]

    def leaves(self):
        """Nodes that require nothing: they can start at once."""
        return [n for n, reqs in self._requires.items() if not reqs]

    def roots(self):
        """Nodes nothing requires: the last to finish."""
        return [n for n, deps in self._required_by.items() if not deps]

    def topological_order(self):
        """Return the nodes so each comes after everything it requires.

        :raises CircularDependencyException: naming the nodes of a cycle.
        """
        remaining = {n: len(r) for n, r in self._requires.items()}
        ready = collections.deque(n for n, c in remaining.items() if not c)
        order = []
        while ready:
            node = ready.popleft()
            order.append(node)
            for dependent in self._required_by[node]:
                remaining[dependent] -= 1
                if not remaining[dependent]:
                    ready.append(dependent)
        if len(order) != len(self._requires):
            raise exception.CircularDependencyException(
                cycle=", ".join(str(n) for n in self._find_cycle(remaining))
            )
        return order

    def reverse_order(self):
        """Topological order reversed: the order of deletion."""
        return list(reversed(self.topological_order()))

    def _find_cycle(self, remaining):
        """Walk requirements among unfinished nodes until one repeats."""
        start = next(n for n, c in remaining.items() if c)
        path, seen = [], {}
        node = start
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = next(
                r
                for r in sorted(self._requires[node], key=str)
                if remaining[r]
            )
        return path[seen[node] :]
