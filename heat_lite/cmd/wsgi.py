"""Serving the API over HTTP with cheroot (threads, no eventlet).

Slow or stalled clients cannot take the workers: connections wait in a
``wsgi_gate.Gate`` until their whole request (head and body) has
arrived; one peer may hold at most ``[api] max_connections_per_peer``
connections (``wsgi_peers``; past that a JSON 429 at once); the listen
backlog and the queue of requests waiting for a worker are bounded (a
request past the queue gets a JSON 503 at once).
"""

import ipaddress
import json
import logging
import queue
import resource
import socket

from cheroot import server as cheroot_server
from cheroot import wsgi

from heat_lite import conf
from heat_lite.api import faults
from heat_lite.cmd import preflight, wsgi_gate, wsgi_peers
from heat_lite.cmd import wsgi_framing as framing

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def is_loopback(host):
    """True if ``host`` (an address or a name) only resolves to loopback."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(
            ipaddress.ip_address(i[4][0]).is_loopback for i in infos
        )


def check_bind():
    """noauth lets anyone act as any project: loopback only, unless the
    operator sets ``[api] allow_insecure_noauth``."""
    if (
        CONF.api.auth_strategy == "noauth"
        and not is_loopback(CONF.api.bind_host)
        and not CONF.api.allow_insecure_noauth
    ):
        raise preflight.StartupError(
            "auth_strategy=noauth refuses to listen on %s: use a "
            "loopback bind_host, auth_strategy=keystone, or set "
            "allow_insecure_noauth=true" % CONF.api.bind_host
        )


def _canned(code, error_type, message, retry=False):
    """A whole HTTP answer in Heat's JSON error format, closing the
    connection: sent where no worker (and no WSGI stack) is involved."""
    body = json.dumps(faults.error_body(code, error_type, message)).encode()
    head = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n" % (
        code,
        faults.error_body(code, "", "")["title"],
    )
    if retry:
        head += "Retry-After: 1\r\n"
    head += "Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
    return head.encode() + body


_BUSY = _canned(
    503,
    "ServiceUnavailable",
    "Too many requests are waiting for the API; try again later.",
    retry=True,
)
_TOO_MANY = _canned(
    429,
    "TooManyConnections",
    "Too many connections from your address; try again later.",
    retry=True,
)
_REFUSALS = {
    framing.HEAD_TOO_LARGE: _canned(
        431,
        "RequestHeaderTooLarge",
        "The request head is larger than %d bytes." % framing.MAX_HEAD,
    ),
    framing.BODY_TOO_LARGE: _canned(
        413,
        "RequestTooLarge",
        "The chunked request body has more framing than data.",
    ),
    framing.MALFORMED: _canned(
        400, "BadRequest", "The request's chunked body is malformed."
    ),
}


class _Request(cheroot_server.HTTPRequest):
    """A body the answer leaves unread closes the connection: cheroot
    would read the rest of it after the answer, from a client that may
    trickle it (the gate hands on a body announced larger than the API
    reads at its head). The API says so itself with ``Connection:
    close`` when it refuses a body (too large, or not received)."""

    def send_headers(self):
        if getattr(self.rfile, "remaining", 0) or (
            b"connection",
            b"close",
        ) in ((k.lower(), v.lower()) for k, v in self.outheaders):
            self.close_connection = True
        super().send_headers()


class _Connection(cheroot_server.HTTPConnection):
    """A connection that gives back what it holds: its peer's slot
    (``wsgi_peers``) when it closes, its request's share of the gate's
    budget when a worker is done with the request."""

    RequestHandlerClass = _Request
    peer_slot = None
    hold = None

    def communicate(self):
        try:
            return super().communicate()
        finally:
            self._release_hold()

    def close(self):
        try:
            super().close()
        finally:
            self._release_hold()
            if self.peer_slot is not None:
                self.peer_slot.release()

    def _release_hold(self):
        hold, self.hold = self.hold, None
        if hold is not None:
            hold.release()


def take_buffered(rfile):
    """The bytes cheroot's reader holds unread, taken out of it.

    cheroot's reader is a ``_pyio.BufferedReader``: what it holds unread
    is ``_read_buf[_read_pos:]`` (what cheroot's own ``has_data`` looks
    at). Only called while no thread reads from it."""
    data = bytes(rfile._read_buf[rfile._read_pos :])
    rfile._read_buf, rfile._read_pos = b"", 0
    return data


def preload(rfile, data):
    """Make ``data`` (the request the gate read) what cheroot's reader
    holds unread, so that the worker reads it from memory (see
    ``take_buffered``); it holds nothing else then."""
    rfile._read_buf, rfile._read_pos = data, 0


class Server(wsgi.Server):
    """cheroot's server with a gate before its worker queue, and a bound
    on the connections of one peer."""

    ConnectionClass = _Connection
    gate = None
    peers = None

    def prepare(self):
        super().prepare()
        self.peers = wsgi_peers.PeerCount(CONF.api.max_connections_per_peer)
        self.gate = wsgi_gate.Gate(
            self._from_gate,
            _refuse,
            CONF.api.client_socket_timeout,
            min(CONF.api.max_waiting_connections, _descriptors_to_spare()),
            CONF.max_json_body_size,
            CONF.api.max_request_buffer_size,
        )

    def process_conn(self, conn):
        """Called by cheroot's selector thread for a new connection or a
        readable kept-alive one: a request already there goes to a worker
        at once, any other waits in the gate."""
        if conn.peer_slot is None and not self._admit(conn):
            return
        if self.ssl_adapter is not None:
            self._to_worker(conn)
            return
        if conn.rfile.has_data():
            # Pipelined: what cheroot read past the last request.
            self.gate.offer(conn, take_buffered(conn.rfile))
            return
        state = wsgi_gate.state_now(conn.socket, CONF.max_json_body_size)
        if state == wsgi_gate.READY:
            self._to_worker(conn)
        elif state == wsgi_gate.CLOSED:
            conn.close()
        else:
            self.gate.offer(conn)

    def _admit(self, conn):
        slot = self.peers.admit(conn.remote_addr)
        if slot is None:
            _send_and_close(conn, _TOO_MANY)
            return False
        conn.peer_slot = slot
        return True

    def _from_gate(self, conn, data, hold):
        if data is not None:
            preload(conn.rfile, data)
            conn.hold = hold
        self._to_worker(conn)

    def _to_worker(self, conn):
        try:
            self.requests.put(conn)
        except queue.Full:
            _send_and_close(conn, _BUSY)

    def stop(self):
        if self.gate is not None:
            self.gate.stop()
        super().stop()


def _descriptors_to_spare():
    """Waiting connections the process's file limit leaves room for: past
    it, accept() would fail and the API stop taking anyone."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONF.api.max_waiting_connections
    reserved = CONF.api.threads + CONF.api.max_queued_requests + 128
    return max(16, soft - reserved)


def _refuse(conn, state):
    _send_and_close(conn, _REFUSALS[state])


def _send_and_close(conn, answer):
    try:
        conn.socket.send(answer, socket.MSG_DONTWAIT)
    except OSError:
        pass
    conn.close()


def make_server(app):
    check_bind()
    server = Server(
        (CONF.api.bind_host, CONF.api.bind_port),
        app,
        numthreads=CONF.api.threads,
        server_name="heat_lite",
        request_queue_size=CONF.api.backlog,
        timeout=CONF.api.client_socket_timeout,
        accepted_queue_size=CONF.api.max_queued_requests,
        accepted_queue_timeout=0,
    )
    return server
