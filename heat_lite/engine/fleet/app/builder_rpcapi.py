"""Client of the builder topic (``[apps] builder_topic``): the engine
topic's push and webhook handlers wake the builder workers after storing
a QUEUED build, so one starts it at once instead of at its next look.

A wake carries nothing: every builder worker that gets it looks for
QUEUED builds itself (``runner.BuildRunner.poke``), and one that is lost
only delays a build until the workers' next periodic look.
"""

from heat_lite import conf
from heat_lite.common import rpc

CONF = conf.CONF
# History:
#   1.0 - wake
BUILDER_API_VERSION = "1.0"


class BuildWorkerAPI:
    """The builder workers' RPC client (the methods of
    ``endpoint.BuilderEndpoint``)."""

    def __init__(self):
        self._client = rpc.get_client(
            CONF.apps.builder_topic, BUILDER_API_VERSION
        )

    def wake(self, ctxt):
        """Tell every builder worker to look for QUEUED builds (a fanout
        cast: a worker whose builds fill its bound ignores it, another
        one starts the build)."""
        self._client.prepare(fanout=True).cast(ctxt, "wake")
