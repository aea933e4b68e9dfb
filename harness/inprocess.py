"""An engine process inside the test process: fake:// transport, its own
topics, a private migrated database, ``[engine]`` overrides, extra plugin
types; everything undone when the block ends.

The one way tests build an in-process engine (``engine_process``); a
module-scoped fixture is its body::

    @pytest.fixture(scope="module")
    def engine(tmp_path_factory):
        with inprocess.engine_process(
            "sqlite", tmp_path_factory.mktemp("x"), {"stall_timeout": 1.0}
        ) as proc:
            yield proc
"""

import contextlib
import uuid

from harness import databases, polling
from heat_lite import conf
from heat_lite.engine import process
from heat_lite.resources import registry

CONF = conf.CONF


@contextlib.contextmanager
def engine_process(
    kind,
    tmp_path,
    overrides=None,
    prepare=None,
    types=None,
    binary="test",
    first_pass=False,
):
    """Yield a started ``EngineProcess`` on a private ``kind`` database.

    :param overrides: {``[engine]`` option: value} for the block.
    :param prepare: called with the process before it starts (to swap a
        collaborator for a fake).
    :param types: {resource type name: plugin class} registered for the
        block, next to the built-in types.
    :param first_pass: wait for the watchdog's first pass before yielding
        (it re-drives every stack at once: see ``first_watchdog_pass``).
    """
    overrides = dict(overrides or {})
    types = dict(types or {})
    CONF([], project="heat_lite")
    suffix = uuid.uuid4().hex[:8]
    overrides.update(topic="engine-" + suffix, worker_topic="worker-" + suffix)
    CONF.set_override("transport_url", "fake://")
    for name, value in overrides.items():
        CONF.set_override(name, value, group="engine")
    try:
        with databases.private_database(kind, tmp_path):
            registry.load()
            registry._TYPES.update(types)
            proc = process.EngineProcess(binary=binary)
            if prepare is not None:
                prepare(proc)
            proc.start()
            try:
                if first_pass:
                    first_watchdog_pass(proc)
                yield proc
            finally:
                proc.stop()
                for name in types:
                    registry._TYPES.pop(name, None)
    finally:
        for name in overrides:
            CONF.clear_override(name, group="engine")
        CONF.clear_override("transport_url")


def first_watchdog_pass(proc):
    """Wait for the watchdog's first pass (it re-drives every stack)."""
    polling.until(lambda: proc.watchdog.passes, 10, "a watchdog pass", 0.05)
