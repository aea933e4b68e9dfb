"""Running the suite in parallel (pytest-xdist, ``-n 4 --dist loadgroup``).

Every fixture is private to its worker already: databases, vhosts and
exchanges carry a random id of the worker's process (``harness.backends``),
ports are picked free, temporary directories are the worker's own and
session fixtures (the deployments) start once per worker. So a new test
runs in parallel safely without doing anything.

Some tests are kept on one worker, in an xdist group (all the tests of a
group run on one worker, one after another), chosen here from their
fixtures and marks:

* ``cloud``: every test that uses the ``cloud`` fixture (directly or
  through another fixture), so that the test cloud starts once per run
  and not once per worker;
* the tests of one module that share a module-scoped fixture (a
  deployment of their own, a keystone, the chaos suite's private
  servers): the group is the module, and the fixture starts once, as it
  does without xdist;
* an explicit ``pytest.mark.xdist_group(name)`` (``chaos-engines``: the
  engine kill/pause scenarios, one at a time).

A test marked ``alone`` bounds the seconds of something that is mostly
CPU (a start-up, a recovery that restarts processes) tightly enough that
two cores shared with other workers would break the bound: no other test
runs on any worker meanwhile. Every test holds a shared lock while it
runs (setup, call, teardown) and an ``alone`` test the exclusive one, so
it waits for the running tests to end and no test starts until it is
done (the lock files are in ``$HEAT_LITE_TEST_LOCKS``, a directory the
xdist controller makes for the run).

Without xdist (``pytest`` alone, or ``-n 0``) the groups and the lock mean
nothing and everything runs in one process as before.

Every module starts with the oslo.config state the one before it found:
``config_reset`` puts back what a module's fixtures and tests set
(``harness/config.py``).
"""

import contextlib
import fcntl
import json
import os
import shutil
import tempfile

import pytest

LOCKS_ENV = "HEAT_LITE_TEST_LOCKS"

# The slowest tests' seconds in a CI run (pytest --durations lines:
# ``grep -E '^[0-9.]+s (setup|call|teardown) ' <tox log>``), by which
# the scheduler starts the longest groups first; a test not listed
# counts DEFAULT_SECONDS.
DURATIONS = os.path.join(os.path.dirname(__file__), "durations.txt")
DEFAULT_SECONDS = 1.0
# {session fixture name: xdist group of every test that uses it}
FIXTURE_GROUPS = {"cloud": "cloud"}
# Fixtures of these scopes, shared by the tests of one module, make the
# module a group.
MODULE_SCOPES = ("module", "class", "package")


@pytest.fixture(scope="module", autouse=True)
def config_reset():
    """Undo the oslo.config overrides, defaults and command-line options
    a test module leaves behind (harness.config)."""
    from harness import config
    from heat_lite import conf

    yield from config.reset_after(conf.CONF)


HA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ha")


def pytest_ignore_collect(collection_path, config):
    """tests/ha (the HA substrate's fault scenarios, ``tox -e ha``) is
    collected only when a path inside it is named on the command line:
    it needs root and a cluster of servers, and takes minutes."""
    if str(collection_path) != HA_DIR:
        return None
    base = str(config.invocation_params.dir)
    for arg in config.args:
        path = os.path.abspath(os.path.join(base, arg.split("::")[0]))
        if path == HA_DIR or path.startswith(HA_DIR + os.sep):
            return None
    return True


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "alone: bounds a CPU-heavy duration tightly; no other test runs "
        "meanwhile on any xdist worker (tests/conftest.py)",
    )
    controller = not hasattr(config, "workerinput")
    if controller and getattr(config.option, "numprocesses", None):
        # Made before the workers start: they inherit the variable.
        os.environ[LOCKS_ENV] = tempfile.mkdtemp(prefix="heat_lite-locks-")
        config._heat_lite_locks = os.environ[LOCKS_ENV]


def pytest_unconfigure(config):
    locks = getattr(config, "_heat_lite_locks", None)
    if locks:
        shutil.rmtree(locks, ignore_errors=True)
        os.environ.pop(LOCKS_ENV, None)


@contextlib.contextmanager
def _turn(locks, alone):
    """Hold the run lock shared, or exclusive for an ``alone`` test.

    The turnstile gives the exclusive side priority: an ``alone`` test
    holds it while it waits and runs, so no new test takes the shared
    lock meanwhile (plain flock would let a stream of shared holders on
    other workers starve it).
    """
    flags = os.O_RDWR | os.O_CREAT
    turnstile = os.open(os.path.join(locks, "turnstile"), flags, 0o600)
    run = os.open(os.path.join(locks, "run"), flags, 0o600)
    try:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(run, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        yield
    finally:
        os.close(run)  # closing releases the locks
        os.close(turnstile)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    locks = os.environ.get(LOCKS_ENV)
    if not locks or not hasattr(item.config, "workerinput"):
        yield
        return
    with _turn(locks, item.get_closest_marker("alone") is not None):
        yield


def _group(item):
    """The xdist group of ``item``, or None (any worker)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs["name"])
    info = getattr(item, "_fixtureinfo", None)
    defs = {
        name: found[-1]  # the definition this test sees
        for name, found in getattr(info, "name2fixturedefs", {}).items()
        if found
    }
    for name, group in FIXTURE_GROUPS.items():
        # Session scope: the test cloud, not a module's own "cloud" (the
        # keystone tests name theirs so too).
        if name in defs and defs[name].scope == "session":
            return group
    if any(d.scope in MODULE_SCOPES for d in defs.values()):
        return item.nodeid.split("::", 1)[0]
    return None


def pytest_collection_modifyitems(config, items):
    """On a worker: write {test id: group} for the controller's scheduler.

    xdist's own ``loadgroup`` renames grouped tests by assigning
    ``Node._nodeid``, which pytest 9.2 no longer reads (the ids stay
    plain, every group is scattered): the groups go to the scheduler
    below through this file instead. Every worker collects the same
    tests and writes the same map; the rename makes each write whole.
    """
    locks = os.environ.get(LOCKS_ENV)
    if not locks or not hasattr(config, "workerinput"):
        return
    groups = {}
    for item in items:
        group = _group(item)
        if group is not None:
            groups[item.nodeid] = group
    path = os.path.join(locks, "groups.json")
    part = "%s.%s" % (path, config.workerinput["workerid"])
    with open(part, "w") as f:
        json.dump(groups, f)
    os.replace(part, path)


def _durations(path=DURATIONS):
    """{test id: seconds} from pytest's ``--durations`` lines (setup,
    call and teardown added up); {} without the file."""
    seconds = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return seconds
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0].endswith("s"):
            try:
                spent = float(parts[0][:-1])
            except ValueError:
                continue
            seconds[parts[2]] = seconds.get(parts[2], 0.0) + spent
    return seconds


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: every group on one worker, the other tests
    one by one wherever a worker is free."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        # LoadScopeScheduling sends a scope's tests to one worker: a group
        # is a scope, and so is each test of no group. The longest scope
        # by the seconds of tests/durations.txt goes first, so that a
        # long group or test does not start last and run alone at the
        # end of the run.
        groups = None
        seconds = None

        def _assign_work_unit(self, node):
            if self.seconds is None:  # the first one: the queue is whole
                self.seconds = _durations()

                def spent(scope):
                    return sum(
                        self.seconds.get(nodeid, DEFAULT_SECONDS)
                        for nodeid in self.workqueue[scope]
                    )

                # Ties keep their order (the most tests first).
                for scope in sorted(reversed(self.workqueue), key=spent):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

        def _split_scope(self, nodeid):
            if "@" in nodeid:  # an xdist that renames grouped tests
                return nodeid.rsplit("@", 1)[-1]
            if self.groups is None:
                # Called once the workers have all collected.
                path = os.path.join(os.environ[LOCKS_ENV], "groups.json")
                with open(path) as f:
                    self.groups = json.load(f)
            return self.groups.get(nodeid, nodeid)

    return GroupScheduling(config, log)
