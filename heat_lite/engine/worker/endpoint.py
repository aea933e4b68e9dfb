"""The worker's RPC endpoint (topic ``[engine] worker_topic``)."""

import oslo_messaging as messaging

from heat_lite.engine import rpcapi
from heat_lite.engine.worker import dispatch


class WorkerEndpoint:
    """Receives ``check_resources`` casts and runs the nodes here, and
    ``detect_drift`` casts (run by ``drift``, an
    ``engine.drift.detect.Detector``, on the dispatcher's thread pool)."""

    target = messaging.Target(version=rpcapi.WORKER_API_VERSION)

    def __init__(self, dispatcher, drift=None):
        self.dispatcher: dispatch.Dispatcher = dispatcher
        self.drift = drift

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        """Run graph ``nodes`` ([[entity_id, phase], ...]) of a traversal.

        Idempotent: stale, finished or locked nodes do nothing.
        """
        self.dispatcher.run_batch(
            [(stack_id, traversal, entity, phase) for entity, phase in nodes]
        )

    def detect_drift(self, ctxt, stack_id, detection):
        """Run drift detection ``detection`` of the stack. A repeated
        message finds the row no longer its detection's and stores
        nothing twice (``db.drift.drift_finish``)."""
        if self.drift is None:
            return
        self.dispatcher.scheduler.submit(
            lambda: self.drift.run(stack_id, detection)
        )
