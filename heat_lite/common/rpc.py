"""oslo.messaging plumbing: the transport, the context serializer, and
factories for clients and servers.

``fake://`` (the embedded default) delivers messages inside one process
(``rpc_inproc``: woken by each delivery);
a ``rabbit://`` transport_url spreads them over engine processes and hosts.
Typed exceptions from ``heat_lite.common.exception`` survive the hop.
"""

import oslo_messaging as messaging
from oslo_messaging.rpc import dispatcher

from heat_lite import conf
from heat_lite.common import context, counters, rpc_inproc

CONF = conf.CONF
# The webhook's refusals (401, 400, 413) are typed in ``apps.webhook``.
ALLOWED_EXMODS = ["heat_lite.common.exception", "heat_lite.apps.webhook"]
MessagingTimeout = messaging.MessagingTimeout
VersionCapError = messaging.RPCVersionCapError

_STATE = {"transport": None}


class ContextSerializer(messaging.Serializer):
    """Carries the RequestContext as a dict; entities are plain JSON."""

    def serialize_entity(self, ctxt, entity):
        return entity

    def deserialize_entity(self, ctxt, entity):
        return entity

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return context.RequestContext.from_dict(ctxt)


def init():
    """Create the RPC transport from ``[DEFAULT] transport_url``."""
    if _STATE["transport"] is None:
        messaging.set_transport_defaults("heat_lite")
        if CONF.transport_url.startswith(conf.EMBEDDED_TRANSPORT):
            # In one process: woken by deliveries, not polling (rpc_inproc).
            _STATE["transport"] = rpc_inproc.transport(CONF, ALLOWED_EXMODS)
        else:
            _spaced_listener_wakeups()
            _STATE["transport"] = messaging.get_rpc_transport(
                CONF, allowed_remote_exmods=ALLOWED_EXMODS
            )
    return _STATE["transport"]


#: The first wait of an AMQP listener for its next message after one came
#: (seconds; oslo.messaging's own is 0.001, doubled on each empty wait).
LISTENER_FIRST_WAIT = 0.05


def _spaced_listener_wakeups():
    """Let oslo.messaging's AMQP listeners wait 50 ms, not 1 ms, after a
    message before they look for more.

    A listener's thread waits for frames on its socket (a frame wakes it
    at once, however long the wait) and, each time a wait ends empty,
    acknowledges the messages its executor has taken since (oslo.messaging
    does not acknowledge from other threads: kombu is not thread-safe);
    its waits start at 1 ms after every message and double up to 5 s. An
    engine answering the API's calls every 100 ms (a client waiting for
    its stack) so woke 7 times per message per listener, to find nothing
    (see doc/bench/cloud_keystone.md for what that cost). With 50 ms no message
    is received later; a message taken is acknowledged up to 50 ms later
    (replies go on another connection, and nothing here limits the
    unacknowledged messages per consumer). A library without this knob
    keeps its own."""
    from oslo_messaging._drivers import amqpdriver

    if hasattr(amqpdriver, "ACK_REQUEUE_EVERY_SECONDS_MIN"):
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = LISTENER_FIRST_WAIT


def cleanup():
    if _STATE["transport"] is not None:
        _STATE["transport"].cleanup()
        _STATE["transport"] = None


class CountingClient:
    """An RPC client that counts the casts and calls it sends."""

    def __init__(self, client):
        self._client = client

    def prepare(self, **kwargs):
        return CountingClient(self._client.prepare(**kwargs))

    def can_send_version(self, version):
        """Whether ``version`` is within the client's version cap."""
        return self._client.can_send_version(version)

    def cast(self, ctxt, method, **kwargs):
        counters.incr("rpc_casts")
        counters.incr("rpc_cast_" + method)
        return self._client.cast(ctxt, method, **kwargs)

    def call(self, ctxt, method, **kwargs):
        counters.incr("rpc_calls")
        return self._client.call(ctxt, method, **kwargs)


def get_client(topic, version, server=None, timeout=None, version_cap=None):
    """A client of ``topic`` whose messages default to ``version``;
    ``version_cap``: none is sent above it (a ``prepare`` asking more
    raises ``VersionCapError``: ``[upgrade_levels]``)."""
    target = messaging.Target(topic=topic, version=version, server=server)
    return CountingClient(
        messaging.get_rpc_client(
            init(),
            target,
            serializer=ContextSerializer(),
            timeout=timeout,
            version_cap=version_cap,
        )
    )


def get_server(topic, server, endpoints):
    """A threading RPC server for ``endpoints`` on (topic, server); its
    pool has ``[DEFAULT] executor_thread_pool_size`` threads (which the
    commands set from ``[engine] executor_threads``, see
    ``cmd.common.parse_args``)."""
    target = messaging.Target(topic=topic, server=server)
    server = messaging.get_rpc_server(
        init(),
        target,
        endpoints,
        executor="threading",
        serializer=ContextSerializer(),
        access_policy=dispatcher.DefaultRPCAccessPolicy,
    )
    return server
