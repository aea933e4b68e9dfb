"""The builder workers of one engine process (``[apps] builder_topic``).

Builds run on threads of their own, never on the engine's RPC or graph
threads, at most ``[apps] max_builds_per_engine`` at once here and
``max_builds_per_app`` of one app anywhere (``db.builds.build_claim``:
one running build per branch, a bounded number per app, by the
database's unique keys). A worker claims QUEUED builds when woken
(``BuildWorkerAPI.wake``, cast after a push) and every
``heartbeat_interval``; a ``Keeper`` takes over the running builds of
engine lives that are gone, and the build resumes from its last durable
step (``driver``).
"""

import logging
import threading

import oslo_messaging as messaging

from heat_lite import conf
from heat_lite.apps import scratch
from heat_lite.common import exception
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import api as db_api
from heat_lite.db import apps as db_apps
from heat_lite.db import builds as db_builds
from heat_lite.engine.fleet import keeper
from heat_lite.engine.fleet.app import builder_rpcapi
from heat_lite.engine.fleet.app import run as run_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class BuildRunner:
    """The builds one engine process runs.

    :param fence: the engine's ``fencing.Fence``.
    :param driver: the ``driver.BuildDriver``.
    """

    label = "build"

    def __init__(self, fence, driver):
        self.fence = fence
        self.driver = driver
        self.keeper = keeper.Keeper(
            fence,
            self.label,
            db_builds.builds_to_take_over,
            db_builds.build_take_over,
            self.run,
            max_running=CONF.apps.max_builds_per_engine,
        )
        self.take_over = self.keeper.take_over
        self.running = self.keeper.running
        self.thread = self.keeper.thread
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._claiming = threading.Lock()
        # Ids of builds whose run returned (their threads are ending).
        self._ended = set()
        self._ended_lock = threading.Lock()

    def start(self):
        self.sweep_scratch()
        self.keeper.start()
        threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-builds"
        ).start()

    def sweep_scratch(self):
        """Remove the scratch directories of this deployment's builds no
        longer running (an engine killed mid-build left them); their
        paths."""
        try:
            removed = scratch.sweep_builds(
                CONF.apps.scratch_dir, db_builds.builds_idle_of
            )
        except Exception as exc:  # noqa: BLE001 - never stop a start
            LOG.warning("Could not sweep the builds' scratch: %s", exc)
            return []
        for path in removed:
            LOG.info("Removed %s, left by a build no longer running", path)
        return removed

    def stop(self):
        self._stop.set()
        self._wake.set()
        self.keeper.stop()

    def poke(self):
        """Look for QUEUED builds now (a push, or a build that ended)."""
        self._wake.set()

    def _loop(self):
        while not self._stop.is_set():
            self._wake.wait(CONF.engine.heartbeat_interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.claim_queued()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_api.is_unavailable(exc):
                    LOG.exception("Build worker pass failed")

    def claim_queued(self):
        """Claim and start QUEUED builds while this engine has room;
        returns their ids (for tests).

        One query finds what may start (``db.builds.builds_claimable``:
        the newest QUEUED build of each free branch of an app with room),
        then one conditional claim each: a wake costs O(what starts), not
        O(what is queued), and a claim another engine won is skipped.
        """
        if not self.fence.lease_valid():
            return []
        started = []
        per_app = CONF.apps.max_builds_per_app
        with self._claiming:
            free = CONF.apps.max_builds_per_engine - self._busy()
            if free <= 0:
                return started
            room = {}
            skipped = False
            for build in db_builds.builds_claimable(free, per_app):
                app = build["app_id"]
                room.setdefault(app, per_app - build["running"])
                if room[app] <= 0:
                    # Another branch of this app took its last slot in
                    # this pass.
                    skipped = True
                    continue
                if not db_builds.build_claim(build, self.fence.owner, per_app):
                    continue
                room[app] -= 1
                self.keeper.launch(build["id"])
                started.append(build["id"])
                free -= 1
                if free <= 0:
                    break
            if skipped and free > 0:
                # Builds of other apps may have been past this page.
                self.poke()
        return started

    def _busy(self):
        """Build threads here that still count against the engine's
        bound: alive, and not past their run (a run that ended pokes
        while its thread is still finishing)."""
        with self._ended_lock:
            self._ended = {i for i in self._ended if self.keeper.running(i)}
            return self.keeper.active() - len(self._ended)

    def run(self, build_id):
        """Run one build this engine owns to a final state."""
        with self._ended_lock:
            self._ended.discard(build_id)  # (run again: taken over)
        try:
            row = db_builds.build_get_by_id(build_id)
            if row is None or row["status"] not in B.RUNNING:
                return
            try:
                app = db_apps.app_get(row["tenant"], row["app_id"])
            except exception.AppNotFound:
                app = None
            build = run_mod.BuildRun(
                row, app or {"username": None}, self.fence
            )
            if app is None:
                build.move(B.FAILED, "The app was deleted")
                return
            self.driver.run(build)
        finally:
            # Its lane and slot are free, and its thread is about to
            # end: the next build may start now, not at the next tick.
            with self._ended_lock:
                self._ended.add(build_id)
            self.poke()


class BuilderEndpoint:
    """The builder topic's RPC methods."""

    target = messaging.Target(version=builder_rpcapi.BUILDER_API_VERSION)

    def __init__(self, runner):
        self.runner = runner

    def wake(self, ctxt):
        """Look for QUEUED builds now (idempotent)."""
        self.runner.poke()
