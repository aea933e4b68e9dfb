"""A reader -- or a tool -- can follow a worker's RPC method to the SQL
that finishes a record, by reading the code alone.

The walk starts at ``WorkerEndpoint.check_resources`` and follows calls
on ``self`` and on ``self.<collaborator>``, whose class it learns from the
collaborator's annotation where ``__init__`` stores it (``self.dispatcher:
dispatch.Dispatcher = dispatcher``) or from the class it is built from
there. It must reach ``heat_lite.db.finish.resource_finish``.
"""

import ast
import importlib.util

START = (
    "heat_lite.engine.worker.endpoint",
    "WorkerEndpoint",
    "check_resources",
)
GOAL = ("heat_lite.db.finish", "resource_finish")


def _module(name):
    spec = importlib.util.find_spec(name)
    with open(spec.origin) as f:
        return ast.parse(f.read())


def _imports(tree, package):
    """{local name: dotted name} of a module's imports (all of them, the
    ``if TYPE_CHECKING`` ones too)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = "%s.%s" % (
                    node.module,
                    alias.name,
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _class_of(expr, module, imports):
    """(module, class) an annotation or constructor expression names."""
    if isinstance(expr, ast.BinOp):  # ``X | None``
        return _class_of(expr.left, module, imports)
    if isinstance(expr, ast.Call):
        return _class_of(expr.func, module, imports)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return imports.get(expr.value.id), expr.attr
    if isinstance(expr, ast.Name):
        return module, expr.id
    return None


def _class(module, name):
    tree = _module(module)
    imports = _imports(tree, module)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, imports
    return None, imports


def _collaborators(cls, module, imports):
    """{attribute: (module, class)} that ``__init__`` stores."""
    found = {}
    for item in cls.body:
        if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
            continue
        for node in ast.walk(item):
            if isinstance(node, ast.AnnAssign):
                target, expr = node.target, node.annotation
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, expr = node.targets[0], node.value
                if not isinstance(expr, ast.Call):
                    continue
            else:
                continue
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                named = _class_of(expr, module, imports)
                if named and named[0]:
                    found.setdefault(target.attr, named)
    return found


def _calls(module, cls_name, method):
    """What ``method`` calls: [("self", name) | (attribute, name) |
    (module, function)]."""
    cls, imports = _class(module, cls_name)
    if cls is None:
        return [], {}, imports
    body = next(
        (
            item
            for item in cls.body
            if isinstance(item, ast.FunctionDef) and item.name == method
        ),
        None,
    )
    calls = []
    for node in ast.walk(body) if body is not None else ():
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not isinstance(func, ast.Attribute):
            continue
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == "self":
            calls.append(("self", func.attr))
        elif (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "self"
        ):
            calls.append((owner.attr, func.attr))
        elif isinstance(owner, ast.Name) and owner.id in imports:
            calls.append((imports[owner.id], func.attr))
    return calls, _collaborators(cls, module, imports), imports


def test_the_walk_from_check_resources_reaches_the_finish():
    seen = set()
    todo = [START]
    reached = []
    while todo:
        step = todo.pop()
        if step in seen:
            continue
        seen.add(step)
        module, cls_name, method = step
        calls, collaborators, _ = _calls(module, cls_name, method)
        for owner, name in calls:
            if owner == "self":
                todo.append((module, cls_name, name))
            elif owner in collaborators:
                todo.append((*collaborators[owner], name))
            elif (owner, name) == GOAL:
                reached.append(step)
    assert reached, sorted(seen)
