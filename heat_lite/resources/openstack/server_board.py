"""One status request per poll tick for all the servers a process waits on.

A ResourceGroup of 20 servers polled each server on its own: 20
``GET /servers/{id}`` a second, each through openstacksdk's resource
layer, for as long as Nova took to build them, and again to delete them.
The board of a connection (an identity: one project's view, see
``client.connection``) answers those polls from one ``GET
/servers/detail?changes-since=<mark>`` instead: every server of the
project that changed since the mark, deleted ones included (Nova lists
them with status ``DELETED`` when ``changes-since`` is given).

What a poll may be answered with: a look at Nova that started after the
poller's own action was sent (``seen_after``: a resize or a delete asked
for 10 ms ago must not be judged by a list taken before it) and no older
than ``max_age``. Any poller that needs a newer look takes the lock and
makes it; the others waiting on the lock then find it fresh enough. A
server the board has not seen yet (or that a list did not name because
it has not changed since the mark, before the board knew it) is read
alone once, as before.

The mark is taken from Nova's own clock, never this host's: the oldest
``updated`` among the servers the board holds, less ``MARGIN`` seconds
(``updated`` has a resolution of one second, and a change may commit
while a list is being read). Any change to a held server after the look
the board holds is stamped later than that look's ``updated``, so a list
never misses it; a server held but not named by a list has not changed.
A server nobody asked about for ``FORGET_AFTER`` seconds is dropped, so
the servers long done do not hold the mark back.
"""

import datetime
import threading
import time

#: Seconds subtracted from the newest ``updated`` seen for the next mark.
MARGIN = 2.0
#: A server nobody asked about for this long is forgotten.
FORGET_AFTER = 30.0


def _parse(stamp):
    """Nova's ``updated`` (ISO 8601, UTC) as an aware datetime, or None."""
    if not stamp:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed


class _Held:
    """What the board holds of one server."""

    __slots__ = ("server", "updated", "seen", "asked")

    def __init__(self, server, updated, seen, asked):
        self.server = server  # None: gone
        self.updated = updated  # Nova's ``updated`` of that look
        self.seen = seen  # monotonic start of the look
        self.asked = asked  # monotonic, last poll that wanted it


class ServerBoard:
    """The servers of one connection's project as last seen."""

    def __init__(self, conn):
        self._conn = conn
        self._lock = threading.Lock()
        self._held = {}  # {server id: _Held}
        self._listed_at = None  # monotonic start of the last list
        self.lists = 0  # requests made (tests, benchmarks)
        self.reads = 0

    def get(self, server_id, seen_after, max_age):
        """The server as Nova showed it in a look that started after
        ``seen_after`` (monotonic) and at most ``max_age`` seconds ago;
        None when it is gone (deleted, or 404)."""
        asked = time.monotonic()
        oldest = max(seen_after, asked - max_age)
        with self._lock:
            held = self._held.get(server_id)
            # A live server without a stamp cannot be followed by lists.
            listed = held is not None and (
                held.server is None or held.updated is not None
            )
            if listed and held.seen < oldest:
                if self._listed_at is None or self._listed_at < oldest:
                    self._list()
                held = self._held.get(server_id)
            if listed and held is not None and held.seen >= oldest:
                held.asked = asked
                return held.server
        # Never seen (or gone from the board): read it alone.
        return self._read(server_id, asked)

    def _list(self):
        started = time.monotonic()
        stamps = [h.updated for h in self._held.values() if h.updated]
        if not stamps:
            return  # nothing live to follow
        mark = min(stamps) - datetime.timedelta(seconds=MARGIN)
        servers = self._conn.compute.servers(
            details=True, changes_since=mark.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        self.lists += 1
        for server in servers:
            self._note(server, started, None)
        # A held server the list did not name has not changed since the
        # look the board holds (see the module's docstring).
        for held in self._held.values():
            if held.server is None or held.updated is not None:
                held.seen = max(held.seen, started)
        self._listed_at = started
        for server_id in [
            sid
            for sid, held in self._held.items()
            if started - held.asked > FORGET_AFTER
        ]:
            del self._held[server_id]

    def _read(self, server_id, asked):
        from openstack import exceptions as sdk_exc

        started = time.monotonic()
        try:
            server = self._conn.compute.get_server(server_id)
        except sdk_exc.NotFoundException:
            server = None
        with self._lock:
            self.reads += 1
            if server is None:
                self._held.pop(server_id, None)
                return None
            return self._note(server, started, asked).server

    def _note(self, server, started, asked):
        """Hold what Nova said of ``server`` (under the lock); a listed
        server nobody here polls is not held (None)."""
        held = self._held.get(server.id)
        if held is not None and held.seen > started:
            return held  # a newer look at it came in meanwhile
        if held is None and asked is None:
            return None
        # A deleted server will not change again: it holds no mark back.
        gone = server.status == "DELETED"
        held = self._held[server.id] = _Held(
            None if gone else server,
            None if gone else _parse(getattr(server, "updated_at", None)),
            started,
            asked if asked is not None else held.asked,
        )
        return held


_BOARDS = threading.Lock()


def board(conn):
    """The board of ``conn`` (one per cached connection: per identity)."""
    found = conn.__dict__.get("_heat_lite_servers")
    if found is None:
        with _BOARDS:
            found = conn.__dict__.setdefault(
                "_heat_lite_servers", ServerBoard(conn)
            )
    return found
