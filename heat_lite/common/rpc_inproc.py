"""The embedded transport (``fake://``): oslo.messaging's in-memory
driver, woken by each delivery instead of polling.

oslo.messaging's fake driver checks its queues every 50 ms while idle, so
every RPC inside ``heat-lite-all`` waited up to 50 ms before a server
took it (an API request of one call: 50 ms p50, against about 1 ms
for a request with no call), and each step of a traversal as much again.
This driver keeps its messages and replies (``impl_fake``'s exchanges and
incoming messages, unchanged) but a listener sleeps on a condition that a
delivery to its exchange notifies. Only ``heat_lite.common.rpc`` builds it
(``transport``): the URL, the exchange and the allowed exception modules
are the ones oslo.messaging would have given the stock driver.
"""

import threading
import time

import oslo_messaging as messaging
from oslo_messaging import transport as messaging_transport
from oslo_messaging._drivers import base, impl_fake

# The longest a listener sleeps without a delivery (it also wakes on stop).
_IDLE_WAIT = 1.0


class _Exchange(impl_fake.FakeExchange):
    """An exchange that counts its deliveries and wakes its listeners."""

    def __init__(self, name):
        super().__init__(name)
        self.delivered = 0
        self.changed = threading.Condition(self._queues_lock)

    def deliver_message(self, *args, **kwargs):
        with self.changed:
            super().deliver_message(*args, **kwargs)
            self.delivered += 1
            self.changed.notify_all()

    def wake(self):
        with self.changed:
            self.changed.notify_all()


class _Exchanges(impl_fake.FakeExchangeManager):
    """The process's exchanges of this driver (as the stock driver's
    manager, a class-level map: every transport of the process shares
    them)."""

    _exchanges_lock = threading.Lock()
    _exchanges = {}

    def get_exchange(self, name):
        if name is None:
            name = self._default_exchange
        with self._exchanges_lock:
            return self._exchanges.setdefault(name, _Exchange(name))


class _Listener(impl_fake.FakeListener):
    """A listener of one exchange (``listen`` gives its two targets, the
    server's and the topic's, the same one)."""

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        exchange = self._exchange_manager.get_exchange(
            self._targets[0].exchange
        )
        while not self._stopped.is_set():
            seen = exchange.delivered
            for target in self._targets:
                ctxt, message, reply_q, requeue = exchange.poll(
                    target, self._pool
                )
                if message is not None:
                    return impl_fake.FakeIncomingMessage(
                        ctxt, message, reply_q, requeue
                    )
            pause = _IDLE_WAIT
            if deadline is not None:
                pause = min(pause, deadline - time.monotonic())
                if pause <= 0:
                    return None
            self._wait(exchange, seen, pause)
        return None

    def _wait(self, exchange, seen, pause):
        """Until a delivery after the ``seen``-th (one that came while
        the queues were read returns at once), a stop, or ``pause``."""
        with exchange.changed:
            exchange.changed.wait_for(
                lambda: self._stopped.is_set() or exchange.delivered != seen,
                pause,
            )

    def stop(self):
        super().stop()
        self._exchange_manager.get_exchange(self._targets[0].exchange).wake()


class InProcessDriver(impl_fake.FakeDriver):
    def __init__(
        self, conf, url, default_exchange=None, allowed_remote_exmods=None
    ):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._exchange_manager = _Exchanges(default_exchange)

    def listen(self, target, batch_size, batch_timeout):
        exchange = target.exchange or self._default_exchange
        listener = _Listener(
            self._exchange_manager,
            [
                messaging.Target(
                    topic=target.topic, server=target.server, exchange=exchange
                ),
                messaging.Target(topic=target.topic, exchange=exchange),
            ],
        )
        return base.PollStyleListenerAdapter(
            listener, batch_size, batch_timeout
        )

    def cleanup(self):
        self._exchange_manager.cleanup()


def transport(conf, allowed_remote_exmods):
    """An RPC transport of this driver for ``conf``'s ``fake://``
    ``transport_url``."""
    url = messaging.TransportURL.parse(conf, conf.transport_url)
    driver = InProcessDriver(
        conf,
        url,
        default_exchange=conf.control_exchange,
        allowed_remote_exmods=allowed_remote_exmods,
    )
    return messaging_transport.RPCTransport(driver)
