"""An engine process inside the test process: fake:// transport, its own
topics, a private migrated database, ``[engine]`` overrides; everything
undone when the block ends."""

import contextlib
import uuid

from heat_lite import conf
from heat_lite.engine import process
from heat_lite.resources import registry
from tests import polling
from tests.unit import databases

CONF = conf.CONF


@contextlib.contextmanager
def engine_process(kind, tmp_path, overrides=None, prepare=None):
    """Yield a started ``EngineProcess`` on a private ``kind`` database.

    :param overrides: {``[engine]`` option: value} for the block.
    :param prepare: called with the process before it starts (to swap a
        collaborator for a fake).
    """
    overrides = dict(overrides or {})
    CONF([], project="heat_lite")
    suffix = uuid.uuid4().hex[:8]
    overrides.update(topic="engine-" + suffix, worker_topic="worker-" + suffix)
    CONF.set_override("transport_url", "fake://")
    for name, value in overrides.items():
        CONF.set_override(name, value, group="engine")
    try:
        with databases.private_database(kind, tmp_path):
            registry.load()
            proc = process.EngineProcess(binary="test")
            if prepare is not None:
                prepare(proc)
            proc.start()
            try:
                yield proc
            finally:
                proc.stop()
    finally:
        for name in overrides:
            CONF.clear_override(name, group="engine")
        CONF.clear_override("transport_url")


def first_watchdog_pass(proc):
    """Wait for the watchdog's first pass (it re-drives every stack)."""
    polling.until(lambda: proc.watchdog.passes, 10, "a watchdog pass", 0.05)
