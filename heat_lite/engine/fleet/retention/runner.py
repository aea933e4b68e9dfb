"""Run the retention pass on one live engine at a time.

Every ``[retention] interval`` each engine asks who runs it: the live
engine that rendezvous hashing of ``"retention"`` over the live engine
ids picks (``recovery.watchdog.watcher``, as stacks are shared out), so
when that engine dies the next live one takes the work over at its next
tick with nothing to hand over. While the set of live engines changes
two engines may both run a pass; every move is conditional on the
generation read and every Glance call idempotent, so that costs a few
wasted statements, never a wrong deletion.
"""

import datetime
import logging
import threading

from heat_lite import conf
from heat_lite.db import models
from heat_lite.db import services as db_services
from heat_lite.db import session as db_session
from heat_lite.engine.fleet.retention.sweep import Sweep
from heat_lite.engine.recovery import watchdog

CONF = conf.CONF
LOG = logging.getLogger(__name__)
KEY = "retention"


class RetentionRunner:
    """The pass's thread in one engine process."""

    def __init__(self, fence, sweep: Sweep):
        self.fence = fence
        self.sweep = sweep
        self._stop = threading.Event()

    def start(self):
        if CONF.retention.interval <= 0:
            return
        threading.Thread(
            target=self._loop, daemon=True, name="heat-lite-retention"
        ).start()

    def stop(self):
        self._stop.set()

    def _loop(self):
        while not self._stop.wait(CONF.retention.interval):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - keep it alive
                if not db_session.is_unavailable(exc):
                    LOG.exception("Retention pass failed")

    def mine(self):
        """Whether this engine is the one that runs the pass now."""
        timeout = CONF.engine.engine_life_check_timeout
        dead_before = models.utcnow() - datetime.timedelta(seconds=timeout)
        members = watchdog.live_members(
            db_services.service_get_all(), dead_before
        )
        engines = sorted({e for e, _ in members} | {self.fence.engine_id})
        return watchdog.watcher(KEY, engines) == self.fence.engine_id

    def tick(self):
        """One pass if it is this engine's; its counts, else None."""
        if not self.fence.lease_valid() or not self.mine():
            return None
        done = self.sweep.run()
        if done:
            LOG.info("Retention pass: %s", done)
        return done
