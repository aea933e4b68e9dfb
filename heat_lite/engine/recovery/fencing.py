"""Who this engine is, and whether it may still act.

An engine's identity is stable across restarts of one host's process:
``engine_id`` is derived from the host, the binary and the worker index
(as Ironic keys reservations by conductor host), so a restarted engine
recognises its own stale locks at once. Each registration bumps the
service row's ``epoch``; record locks carry the epoch they were taken in.

Fencing: once another engine claims this one as dead (its heartbeat was
too old), the database refuses this engine's late writes (they are
conditional on the epoch) and it must stop acting. It learns so from its
next heartbeat, drops its work (``generation`` changes, so running jobs
stop at their next step) and registers again under a new epoch.

A lease closes the window before that heartbeat: a process that was
paused (SIGSTOP, a stalled VM) cannot know it was claimed until it talks
to the database, so it starts no plugin action unless its last successful
heartbeat began less than ``lease`` seconds ago -- shorter than the
``engine_life_check_timeout`` after which the others may claim it.
"""

import logging
import os
import socket
import threading
import time
import uuid

from heat_lite import conf
from heat_lite.db import models
from heat_lite.db import services as db_services
from heat_lite.db import session as db_session

CONF = conf.CONF
LOG = logging.getLogger(__name__)

_NAMESPACE = uuid.UUID("5f1d6b8e-4c1e-4a43-9d7e-0b3f2f6d7a11")
# Share of engine_life_check_timeout an engine trusts its last heartbeat.
LEASE_SHARE = 0.6


def stable_engine_id(host, binary, index):
    """The engine id of worker ``index`` of ``binary`` on ``host``."""
    return str(uuid.uuid5(_NAMESPACE, "%s/%s/%d" % (host, binary, index)))


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def may_take_over(row):
    """Whether a live service row with our identity may be taken over:
    it is this process, an earlier life on this host that has exited, or
    its heartbeat is older than the liveness timeout."""
    if row["hostname"] == socket.gethostname():
        if row["pid"] == os.getpid() or not _pid_alive(row["pid"]):
            return True
    age = (models.utcnow() - row["updated_at"]).total_seconds()
    return age > CONF.engine.engine_life_check_timeout


class Fence:
    """The identity, epoch, lease and generation of one engine process."""

    def __init__(self, engine_id, values):
        self.engine_id = engine_id
        self.values = dict(values)
        self.epoch = None
        # Bumped when the engine is fenced or retires: jobs of an older
        # generation stop at their next step.
        self.generation = 0
        self.retiring = False
        self._last_ok = None
        self._healthy_since = None
        self._lock = threading.Lock()

    @property
    def owner(self):
        """The lock owner written to (and guarding) records."""
        return (self.engine_id, self.epoch)

    def snapshot(self):
        """(owner, generation), read together: what a lock is taken as.
        A job keeps them, so that after a re-registration its late
        writes carry the old epoch and are refused."""
        with self._lock:
            return (self.engine_id, self.epoch), self.generation

    def register(self):
        """Register under a new epoch; with our stable identity if it is
        free, else (another live process has it) under a random one."""
        values = dict(self.values, engine_id=self.engine_id)
        row = db_services.service_register(values, may_take_over)
        if row is None:
            LOG.info(
                "Engine identity %s is held by a live process; "
                "using a random one",
                self.engine_id,
            )
            self.engine_id = str(uuid.uuid4())
            row = db_services.service_register(
                dict(values, engine_id=self.engine_id), may_take_over
            )
        with self._lock:
            self.epoch = row["epoch"]
            self._last_ok = self._healthy_since = time.monotonic()
        return row

    def renewed(self, started):
        """A heartbeat that began at ``started`` (monotonic) succeeded."""
        with self._lock:
            if self._healthy_since is None:
                self._healthy_since = started
            self._last_ok = started

    def lost(self):
        """A heartbeat failed (database unreachable): the lease runs out
        on its own; the engine is no longer continuously healthy."""
        with self._lock:
            self._healthy_since = None

    def fenced(self):
        """Another engine claimed us: drop everything we were doing."""
        with self._lock:
            self.generation += 1
            self._last_ok = self._healthy_since = None

    def retire(self):
        """Stopping: jobs still running stop at their next step."""
        with self._lock:
            self.retiring = True
            self.generation += 1

    def lease_valid(self):
        """True while this engine may start plugin actions."""
        with self._lock:
            last = self._last_ok
        if last is None or self.retiring:
            return False
        lease = CONF.engine.engine_life_check_timeout * LEASE_SHARE
        return time.monotonic() - last < lease

    def healthy_for(self, seconds):
        """True if every heartbeat of the last ``seconds`` succeeded: only
        then may this engine judge others dead (after a database outage
        every heartbeat is old, its own included)."""
        with self._lock:
            since = self._healthy_since
        return since is not None and time.monotonic() - since >= seconds


class Heartbeat:
    """Refreshes the service row every ``heartbeat_interval`` on its own
    thread, so a slow watchdog pass never delays a heartbeat; re-registers
    under a new epoch when it finds the engine was claimed."""

    def __init__(self, fence, on_fenced):
        self.fence = fence
        self.on_fenced = on_fenced
        self._stop = threading.Event()
        self._thread = None
        self._failing = False

    def start(self):
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-heartbeat"
        )
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self):
        while not self._stop.wait(CONF.engine.heartbeat_interval):
            self.beat()

    def beat(self):
        started = time.monotonic()
        fence = self.fence
        try:
            alive = db_services.service_heartbeat(fence.engine_id, fence.epoch)
        except Exception as exc:  # noqa: BLE001 - keep beating
            if self._failing:
                pass
            elif db_session.is_unavailable(exc):
                # A known transient error (a restart, no connection slot
                # left): one line, not a traceback.
                LOG.warning(
                    "Heartbeat of engine %s failed: %s", fence.engine_id, exc
                )
            else:
                LOG.exception("Heartbeat of engine %s failed", fence.engine_id)
            self._failing = True
            fence.lost()
            return
        if self._failing:
            LOG.info("Heartbeat of engine %s works again", fence.engine_id)
            self._failing = False
        if alive:
            fence.renewed(started)
            return
        if self._stop.is_set() or fence.retiring:
            return
        LOG.warning(
            "Engine %s (epoch %s) was claimed as dead: dropping "
            "its work and registering again",
            fence.engine_id,
            fence.epoch,
        )
        fence.fenced()
        self.on_fenced()
        try:
            fence.register()
        except Exception:  # noqa: BLE001 - next beat tries again
            LOG.exception(
                "Engine %s could not register again", fence.engine_id
            )
            return
        LOG.info(
            "Engine %s registered again in epoch %s",
            fence.engine_id,
            fence.epoch,
        )
