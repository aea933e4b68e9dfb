"""One status request per poll tick for all the servers a process waits on.

A ResourceGroup of 20 servers polled each server on its own: 20
``GET /servers/{id}`` a second, each through openstacksdk's resource
layer, for as long as Nova took to build them, and again to delete them.
The board of a connection (an identity: one project's view, see
``client.connection``) answers those polls from one ``GET
/servers/detail?changes-since=<mark>`` instead: every server of the
project that changed since the mark, deleted ones included (Nova lists
them with status ``DELETED`` when ``changes-since`` is given). The list
is read as plain JSON, and so is the first look at a server read alone:
a poll is answered with a ``Look`` at that JSON, which reads the fields
polls ask for (status, task state, fault, name) and the attributes at
completion (addresses, access IPs, instance name, tags) from it directly.
openstacksdk's Server objects, whose making was most of a list's CPU
and then most of a poll's (profiled: its ``Resource.__init__`` makes a
dict of every attribute), are made only when something else is asked
of a look (the attributes at completion, ``show``), once per look.

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


class Look:
    """One server as one look at Nova showed it: what polls read of it
    straight from Nova's JSON (``body``), any other attribute from
    openstacksdk's Server made from that JSON (by ``make``) when first
    asked for."""

    __slots__ = ("_body", "_make", "_server")

    def __init__(self, body, make):
        self._body = body
        self._make = make
        self._server = None

    id = property(lambda self: self._body.get("id"))
    name = property(lambda self: self._body.get("name"))
    status = property(lambda self: self._body.get("status"))
    fault = property(lambda self: self._body.get("fault"))
    task_state = property(lambda self: self._body.get("OS-EXT-STS:task_state"))
    updated_at = property(lambda self: self._body.get("updated"))
    # What a server's attributes at completion read (``nova.Server.
    # _resolve_attribute``), as openstacksdk's Server gives them: making
    # that Server for them was most of the CPU of a server's completion.
    addresses = property(lambda self: self._body.get("addresses"))
    access_ipv4 = property(lambda self: self._body.get("accessIPv4"))
    access_ipv6 = property(lambda self: self._body.get("accessIPv6"))
    instance_name = property(
        lambda self: self._body.get("OS-EXT-SRV-ATTR:instance_name")
    )
    # openstacksdk's default when Nova's microversion has no tags.
    tags = property(lambda self: self._body.get("tags", []))

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._server is None:
            self._server = self._make(self._body)
        return getattr(self._server, attr)

    def __repr__(self):
        return "Look(%r, %r)" % (self.id, self.status)


class _Held:
    """What the board holds of one server: Nova's JSON of it from a list
    or a read alone (its ``Look`` made when a poll asks, again only when
    the JSON changed); or that it is gone."""

    __slots__ = ("body", "obj", "gone", "updated", "seen", "asked")

    def __init__(self, seen, asked):
        self.body = None  # Nova's JSON of it
        self.obj = None  # its Look, made from body
        self.gone = False
        self.updated = None  # Nova's ``updated`` of that look
        self.seen = seen  # monotonic start of the look
        self.asked = asked  # monotonic, last poll that wanted it

    def follows(self):
        """Lists can keep it up to date (a live server needs a stamp)."""
        return self.gone or self.updated is not None


class ServerBoard:
    """The servers of one connection's project as last seen."""

    def __init__(self, conn):
        self._conn = conn
        self._lock = threading.Lock()
        self._held = {}  # {server id: _Held}
        self._listed_at = None  # monotonic start of the last list
        self._micro = None  # (the compute microversion,) once negotiated
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
            listed = held is not None and held.follows()
            if listed and held.seen < oldest:
                if self._listed_at is None or self._listed_at < oldest:
                    self._list()
                held = self._held.get(server_id)
            if listed and held is not None and held.seen >= oldest:
                held.asked = asked
                return self._server(held)
        # Never seen (or gone from the board): read it alone.
        return self._read(server_id, asked)

    def _server(self, held):
        """The ``Look`` of ``held`` (under the lock), once per change."""
        if held.gone:
            return None
        if held.obj is None:
            held.obj = Look(held.body, self._sdk_server)
        return held.obj

    def _sdk_server(self, body):
        """openstacksdk's Server of ``body``, made as ``Resource.list``
        makes each one it yields."""
        return sdk_server().Server.existing(
            microversion=self._microversion(),
            connection=self._conn,
            **body,
        )

    def _microversion(self):
        if self._micro is None:
            proxy = self._conn.compute
            self._micro = (sdk_server().Server._get_microversion(proxy),)
        return self._micro[0]

    def _bodies(self, mark):
        """The JSON of every server changed since ``mark``, page by page
        (a raw GET: no Resource object for servers nobody polls)."""
        from openstack import exceptions as sdk_exc

        proxy = self._conn.compute
        params = {"changes-since": mark.strftime("%Y-%m-%dT%H:%M:%SZ")}
        while True:
            response = proxy.get(
                "/servers/detail",
                params=params,
                microversion=self._microversion(),
                headers={"Accept": "application/json"},
            )
            sdk_exc.raise_from_response(response)
            data = response.json()
            servers = data.get("servers") or []
            yield from servers
            more = [
                link
                for link in data.get("servers_links") or []
                if link.get("rel") == "next"
            ]
            if not servers or not more:
                return
            params = dict(params, marker=servers[-1]["id"])

    def _list(self):
        started = time.monotonic()
        stamps = [h.updated for h in self._held.values() if h.updated]
        if not stamps:
            return  # nothing live to follow
        mark = min(stamps) - datetime.timedelta(seconds=MARGIN)
        bodies = list(self._bodies(mark))
        self.lists += 1
        for body in bodies:
            held = self._held.get(body.get("id"))
            if held is None or held.seen > started:
                continue  # nobody polls it here, or a newer look came in
            if body.get("status") == "DELETED":
                # Gone: it will not change again, and holds no mark back.
                held.gone, held.updated = True, None
                held.body = held.obj = None
            elif body != held.body:
                held.body, held.obj = body, None
                held.updated = _parse(body.get("updated"))
        # A held server the list did not name has not changed since the
        # look the board holds (see the module's docstring).
        for held in self._held.values():
            if held.follows():
                held.seen = max(held.seen, started)
        self._listed_at = started
        for server_id in [
            sid
            for sid, held in self._held.items()
            if started - held.asked > FORGET_AFTER
        ]:
            del self._held[server_id]

    def _get_body(self, server_id):
        """Nova's JSON of one server (a raw GET, as ``compute.get_server``
        asks it), or None on a 404."""
        from openstack import exceptions as sdk_exc

        response = self._conn.compute.get(
            "/servers/%s" % server_id,
            microversion=self._microversion(),
            headers={"Accept": "application/json"},
        )
        try:
            sdk_exc.raise_from_response(response)
        except sdk_exc.NotFoundException:
            return None
        return response.json().get("server")

    def _read(self, server_id, asked):
        started = time.monotonic()
        body = self._get_body(server_id)
        with self._lock:
            self.reads += 1
            if body is None:
                self._held.pop(server_id, None)
                return None
            held = self._held.get(server_id)
            if held is not None and held.seen > started:
                return self._server(held)  # a newer look came in
            held = self._held[server_id] = _Held(started, asked)
            if body.get("status") == "DELETED":
                held.gone = True
            else:
                held.body = body
                held.updated = _parse(body.get("updated"))
            return self._server(held)


def sdk_server():
    """openstacksdk's compute server module (imported when first used,
    as ``client._sdk`` imports openstacksdk)."""
    from openstack.compute.v2 import server

    return server


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
