"""The worker's RPC endpoint (topic ``[engine] worker_topic``)."""

import oslo_messaging as messaging

from heat_lite.engine import rpcapi
from heat_lite.engine.worker import dispatch


class WorkerEndpoint:
    """Receives ``check_resources`` casts and runs the nodes here."""

    target = messaging.Target(version=rpcapi.WORKER_API_VERSION)

    def __init__(self, dispatcher):
        self.dispatcher: dispatch.Dispatcher = dispatcher

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        """Run graph ``nodes`` ([[entity_id, phase], ...]) of a traversal.

        Idempotent: stale, finished or locked nodes do nothing.
        """
        self.dispatcher.run_batch(
            [(stack_id, traversal, entity, phase) for entity, phase in nodes]
        )
