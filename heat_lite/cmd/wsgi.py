"""Serving the API over HTTP with cheroot (threads, no eventlet).

Slow or stalled clients cannot take the workers: connections wait in a
``wsgi_gate.Gate`` until their request has arrived; the listen backlog
and the queue of requests waiting for a worker are bounded (a request
past the queue gets a JSON 503 at once).
"""

import ipaddress
import json
import logging
import queue
import socket

from cheroot import server as cheroot_server
from cheroot import wsgi

from heat_lite import conf
from heat_lite.cmd import preflight, wsgi_gate

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


_BUSY = json.dumps(
    {
        "code": 503,
        "title": "Service Unavailable",
        "explanation": "The server is currently unavailable. Please try again "
        "at a later time.",
        "error": {
            "type": "ServiceUnavailable",
            "message": "Too many requests "
            "are waiting for the API; try again later.",
            "traceback": None,
        },
    }
).encode()
_BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: application/json\r\nConnection: close\r\n"
    b"Retry-After: 1\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY), _BUSY)
)


class _Request(cheroot_server.HTTPRequest):
    """An answer with ``Connection: close`` closes the connection: the
    API says so when it did not read the whole body (too large, or the
    client stalled), so cheroot does not try to read the rest."""

    def send_headers(self):
        if (b"connection", b"close") in (
            (k.lower(), v.lower()) for k, v in self.outheaders
        ):
            self.close_connection = True
        super().send_headers()


class _Connection(cheroot_server.HTTPConnection):
    RequestHandlerClass = _Request


class Server(wsgi.Server):
    """cheroot's server with a gate before its worker queue."""

    ConnectionClass = _Connection
    gate = None

    def prepare(self):
        super().prepare()
        self.gate = wsgi_gate.Gate(
            self._to_worker,
            CONF.api.client_socket_timeout,
            CONF.api.max_waiting_connections,
        )

    def process_conn(self, conn):
        """Called by cheroot's selector thread for a new connection or a
        readable kept-alive one."""
        if self.ssl_adapter is None and not conn.rfile.has_data():
            self.gate.offer(conn)
        else:
            self._to_worker(conn)

    def _to_worker(self, conn):
        try:
            self.requests.put(conn)
        except queue.Full:
            _refuse(conn)

    def stop(self):
        if self.gate is not None:
            self.gate.stop()
        super().stop()


def _refuse(conn):
    try:
        conn.socket.send(_BUSY_RESPONSE, socket.MSG_DONTWAIT)
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
