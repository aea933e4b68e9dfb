"""Periodic drift detection of the stacks that opted in.

A stack opts in with the tag ``conf.drift.OPT_IN_TAG``
(``heat-lite:detect-drift``: ``openstack stack create --tags`` or an
update's tags), so heatclient users and stacks without it see nothing
new. With ``[drift] interval`` above 0, each watchdog pass
(``recovery.watchdog.Watchdog.tick``, which hands its shares the live
engines) asks ``Periodic.tick``: the due stacks (never detected, or
last detected ``interval`` seconds ago; none with an operation in
progress) are read in one statement, each engine keeps those the
watchdog's rendezvous hash gives it (``watchdog.watcher``: one live
engine per stack, the same as the one watching it), and starts their
detections as ``detect_drift`` does: ``db.drift.drift_start`` (one
conditional write, so a detection already running, asked for or
periodic, is never doubled) and a cast to any worker. What a detection
emits when a stack becomes DRIFTED is ``detect``'s.
"""

import datetime
import logging
import uuid

from heat_lite import conf
from heat_lite.common import context
from heat_lite.conf import drift as drift_conf
from heat_lite.db import drift as db_drift
from heat_lite.db import models
from heat_lite.engine import rpcapi
from heat_lite.engine.drift import endpoint
from heat_lite.engine.recovery import watchdog

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class Periodic:
    """One engine's share of the periodic detections.

    :param engine_id: a callable giving this engine's id (the fence's).
    """

    def __init__(self, engine_id, worker_api=None):
        self._engine_id = engine_id
        self._worker_api = worker_api

    @property
    def worker_api(self):
        if self._worker_api is None:
            self._worker_api = rpcapi.WorkerAPI()
        return self._worker_api

    def tick(self, engines, now=None):
        """Start the due detections of this engine's stacks.

        :param engines: the live engine ids (the watchdog's pass).
        :param now: the time the pass runs at (tests pass a later one
            instead of waiting for the interval).
        :returns: [(stack id, detection id)] started.
        """
        interval = CONF.drift.interval
        if not interval:
            return []
        now = now or models.utcnow()
        due = db_drift.drift_due(
            drift_conf.OPT_IN_TAG,
            now - datetime.timedelta(seconds=interval),
            now - datetime.timedelta(seconds=endpoint.STALE_SECONDS),
        )
        me = self._engine_id()
        mine = [s for s in due if watchdog.watcher(s["id"], engines) == me]
        started = []
        for stack in mine[: CONF.drift.batch]:
            detection = str(uuid.uuid4())
            if not db_drift.drift_start(
                stack["id"], stack["tenant"], detection, endpoint.STALE_SECONDS
            ):
                continue  # one started meanwhile
            self.worker_api.detect_drift(
                context.get_admin_context(), stack["id"], detection
            )
            started.append((stack["id"], detection))
        if started:
            LOG.info("Periodic drift detection of %d stack(s)", len(started))
        return started
