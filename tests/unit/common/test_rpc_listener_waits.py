"""An AMQP transport's listeners wait 50 ms, not 1 ms, after a message
before looking for more (``rpc._spaced_listener_wakeups``): oslo.messaging
reads the module constant each time a listener starts its waits over, so
the value set when the transport is made is the one its listeners use."""

from oslo_messaging._drivers import amqpdriver

from heat_lite import conf
from heat_lite.common import rpc


def test_a_rabbit_transport_spaces_its_listeners_waits(monkeypatch):
    monkeypatch.setattr(amqpdriver, "ACK_REQUEUE_EVERY_SECONDS_MIN", 0.001)
    monkeypatch.setattr(rpc, "_STATE", {"transport": None})
    conf.CONF.set_override(
        "transport_url", "rabbit://guest:guest@127.0.0.1:5672/unused"
    )
    try:
        rpc.init()  # makes the transport; connects on first use only
        assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == (
            rpc.LISTENER_FIRST_WAIT
        )
    finally:
        rpc.cleanup()
        conf.CONF.clear_override("transport_url")


def test_the_embedded_transport_leaves_oslo_messaging_as_it_is(monkeypatch):
    monkeypatch.setattr(amqpdriver, "ACK_REQUEUE_EVERY_SECONDS_MIN", 0.001)
    monkeypatch.setattr(rpc, "_STATE", {"transport": None})
    conf.CONF.set_override("transport_url", conf.EMBEDDED_TRANSPORT)
    try:
        rpc.init()
        assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == 0.001
    finally:
        rpc.cleanup()
        conf.CONF.clear_override("transport_url")
