"""How many connections one peer may hold open on the API.

Without a bound, one client could fill the gate's waiting room (the
oldest waiting connection is closed past ``max_waiting_connections``) and
its share of the request buffer by itself. A peer is an IPv4 address, or
an IPv6 /64 (one host commonly has a whole /64 to pick addresses from);
an IPv4-mapped IPv6 address counts as its IPv4 address.
"""

import ipaddress
import logging
import threading
import time

LOG = logging.getLogger(__name__)
_LOG_EVERY = 60.0


def peer_of(address):
    """The peer an address counts for (None: not an IP address, e.g. a
    UNIX socket's, and not counted)."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
    except ValueError:
        return None
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network((ip, 64), strict=False))
    return str(ip)


class PeerCount:
    """Open connections per peer, at most ``limit`` each (0: no limit)."""

    def __init__(self, limit):
        self.limit = limit
        self._open = {}
        self._lock = threading.Lock()
        self._logged = 0.0

    def admit(self, address):
        """Count a new connection from ``address``: a ``Slot`` to release
        when the connection closes, or None if the peer has ``limit``
        open already."""
        peer = peer_of(address)
        if not self.limit or peer is None:
            return Slot(self, None)
        with self._lock:
            count = self._open.get(peer, 0)
            if count >= self.limit:
                self._log_refusal(peer)
                return None
            self._open[peer] = count + 1
        return Slot(self, peer)

    def open_count(self, address):
        return self._open.get(peer_of(address), 0)

    def _leave(self, slot):
        with self._lock:
            if slot.peer is None:
                return  # not counted, or released already
            peer, slot.peer = slot.peer, None
            count = self._open.pop(peer, 0) - 1
            if count > 0:
                self._open[peer] = count

    def _log_refusal(self, peer):
        """Once a minute at most: a peer that keeps trying must not fill
        the log."""
        now = time.monotonic()
        if now - self._logged >= _LOG_EVERY:
            self._logged = now
            LOG.warning(
                "Refusing connections from %s: it has %d open "
                "([api] max_connections_per_peer; behind a load balancer "
                "every client shares its address)",
                peer,
                self.limit,
            )


class Slot:
    """One counted connection; ``release`` uncounts it (once, however
    often it is called: cheroot may close a connection twice)."""

    __slots__ = ("count", "peer")

    def __init__(self, count, peer):
        self.count = count
        self.peer = peer

    def release(self):
        self.count._leave(self)
