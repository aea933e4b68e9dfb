"""The seams of ``heat_lite.db``: each database's writes chosen once, no
dialect test in the modules of the hot path, no import cycle, and the
engine calling the module that owns a function rather than the old
``db.api``."""

import ast
import os

from heat_lite.db import dialects
from heat_lite.db.dialects import base, mysql, postgresql

DB = os.path.join(
    os.path.dirname(
        os.path.dirname(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        )
    ),
    "heat_lite",
    "db",
)
# The modules of a node's step: they ask ``dialects.writes()``.
HOT = ("records", "locks", "finish", "sync_points", "traversals", "events")
EXPECTED = {
    "postgresql": postgresql.PostgreSQL,
    "mysql": mysql.MySQL,
    "sqlite": base.Writes,
}


def test_each_database_has_its_writes_chosen_once(database):
    kind, _ = database
    writes = dialects.writes()
    assert type(writes) is EXPECTED[kind]
    assert dialects.writes() is writes


def _tree(name):
    with open(os.path.join(DB, name + ".py")) as f:
        return ast.parse(f.read())


def test_no_hot_module_looks_at_the_dialect():
    found = []
    for name in HOT:
        for node in ast.walk(_tree(name)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("dialect", "name", "driver")
                and "dialect" in ast.unparse(node)
            ) or (isinstance(node, ast.Name) and node.id == "dialect"):
                found.append((name, ast.unparse(node)))
    assert found == []


def _db_imports():
    """{module: db modules it imports at module level}."""
    graph = {}
    for root, _, files in os.walk(DB):
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(root, file)
            module = os.path.relpath(path, DB)[:-3].replace(os.sep, ".")
            module = module.removesuffix(".__init__")
            with open(path) as f:
                body = ast.parse(f.read()).body
            imported = set()
            for node in body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    if node.module == "heat_lite.db":
                        imported.update(a.name for a in node.names)
                    elif node.module.startswith("heat_lite.db."):
                        imported.add(node.module[len("heat_lite.db.") :])
            graph[module] = {m for m in imported if m != module}
    return graph


def test_db_modules_import_each_other_in_no_cycle():
    graph = _db_imports()
    assert {"api", "records", "traversals", "dialects.base"} <= set(graph)
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError(
                "cycle: %s"
                % " -> ".join(path[path.index(module) :] + [module])
            )
        if module in done:
            return
        path.append(module)
        for other in sorted(graph.get(module, ())):
            visit(other)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    # The old home re-exports; nothing it re-exports imports it back.
    assert not any(
        "api" in graph[m]
        for m in graph
        if m != "api"
        and (
            m in HOT or m.startswith("dialects") or m in ("stacks", "services")
        )
    )


def test_the_engine_calls_the_owning_modules():
    """``db.api`` only re-exports, for callers not moved yet (the fleet,
    tests): the engine's worker, traversal, recovery and endpoints import
    the module that owns each function."""
    engine = os.path.join(os.path.dirname(DB), "engine")
    found = []
    for root, _, files in os.walk(engine):
        if "fleet" in os.path.relpath(root, engine).split(os.sep):
            continue
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(root, file)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (
                    node.module == "heat_lite.db.api"
                    or node.module == "heat_lite.db"
                    and any(a.name == "api" for a in node.names)
                ):
                    found.append(os.path.relpath(path, engine))
    assert found == []
