"""The test harness stays one package (harness/, issue 27): tests/ and
bench/ import it and not each other for it, it imports neither, and
tests wait through its waiters, not through loops of their own."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLOCK = {"time", "monotonic"}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module.split(".")[0]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]


def _sources(folder):
    return sorted((ROOT / folder).rglob("*.py"))


def test_harness_imports_neither_tests_nor_bench():
    wrong = [
        str(p.relative_to(ROOT))
        for p in _sources("harness")
        if {"tests", "bench"} & set(_imports(p))
    ]
    assert not wrong, wrong


def test_bench_does_not_import_tests():
    wrong = [
        str(p.relative_to(ROOT))
        for p in _sources("bench")
        if "tests" in set(_imports(p))
    ]
    assert not wrong, wrong


def _reads(node):
    """What ``node`` reads: ``time.<attr>`` names and ``deadline``."""
    names = set()
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "time"
        ):
            names.add(sub.attr)
        elif isinstance(sub, ast.Name) and sub.id == "deadline":
            names.add("deadline")
    return names


def deadline_loops(source):
    """Line numbers of the ``while`` loops in ``source`` that wait for a
    deadline by hand: the loop's test reads the clock (or a
    ``deadline``), or its body sleeps and reads it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.While):
            continue
        clock = CLOCK | {"deadline"}
        body = set().union(*(_reads(n) for n in node.body))
        if clock & _reads(node.test) or ("sleep" in body and clock & body):
            found.append(node.lineno)
    return found


def test_tests_wait_through_the_harness():
    loops = {
        str(p.relative_to(ROOT)): deadline_loops(p.read_text())
        for p in _sources("tests")
    }
    assert not {p: n for p, n in loops.items() if n}


def test_a_hand_written_deadline_loop_is_found():
    source = (
        "import time\n"
        "def wait(ready):\n"
        "    deadline = time.monotonic() + 5\n"
        "    while time.monotonic() < deadline:\n"
        "        if ready():\n"
        "            return\n"
        "        time.sleep(0.1)\n"
        "def also(ready):\n"
        "    deadline = time.time() + 5\n"
        "    while not ready():\n"
        "        assert time.time() < deadline\n"
        "        time.sleep(0.1)\n"
        "def hammer(stop, calls):\n"
        "    while not stop.is_set():\n"
        "        started = time.time()\n"
        "        calls.append(time.time() - started)\n"
    )
    assert deadline_loops(source) == [4, 10]
