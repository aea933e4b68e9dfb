"""What the API's cheroot server adds: a request the gate read is served
from memory, connections give back what they hold, refusals in Heat's
JSON error format."""

import contextlib
import json
import socket

import pytest

from heat_lite.cmd import wsgi, wsgi_buffer, wsgi_peers


def _app(environ, start_response):
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture
def served():
    """A connection of a real (not started) server, its client's end."""
    server = wsgi.Server(("127.0.0.1", 0), _app)
    left, right = socket.socketpair()
    conn = wsgi._Connection(server, left)
    yield conn, right
    right.close()
    with contextlib.suppress(OSError):  # closed by the test already
        conn.close()


def _request(body):
    return b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def test_a_preloaded_request_is_served_from_memory(served):
    conn, client = served
    body = b"b" * 50000
    budget = wsgi_buffer.Budget(10**6)
    conn.hold = wsgi_buffer.Hold(budget)
    budget.reserve(conn.hold, len(_request(body)))
    # Nothing in the socket: cheroot reads it all from the preload.
    wsgi.preload(conn.rfile, _request(body) + b"GET / HT")
    conn.communicate()
    client.settimeout(5)
    answer = b""
    while not answer.endswith(body):
        answer += client.recv(1 << 20)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert budget.used == 0  # given back when the request is done
    # A pipelined next request stays for cheroot's has_data().
    assert conn.rfile.has_data()
    assert wsgi.take_buffered(conn.rfile) == b"GET / HT"
    assert not conn.rfile.has_data()


def test_a_preloaded_reader_reads_on_from_the_socket(served):
    conn, client = served
    wsgi.preload(conn.rfile, b"abc")
    client.sendall(b"def\n")
    assert conn.rfile.readline() == b"abcdef\n"


def test_close_gives_back_what_it_holds(served):
    conn, _client = served
    budget = wsgi_buffer.Budget(100)
    conn.hold = wsgi_buffer.Hold(budget)
    budget.reserve(conn.hold, 60)
    peers = wsgi_peers.PeerCount(1)
    conn.peer_slot = peers.admit("192.0.2.1")
    assert peers.admit("192.0.2.1") is None
    conn.close()
    assert budget.used == 0 and peers.open_count("192.0.2.1") == 0


@pytest.mark.parametrize(
    "answer,code,error_type",
    [
        (wsgi._BUSY, 503, "ServiceUnavailable"),
        (wsgi._TOO_MANY, 429, "TooManyConnections"),
        *((a, None, None) for a in wsgi._REFUSALS.values()),
    ],
)
def test_refusals_are_heat_errors(answer, code, error_type):
    head, _sep, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert b"Connection: close" in lines
    assert b"Content-Length: %d" % len(body) in lines
    error = json.loads(body)
    assert lines[0] == b"HTTP/1.1 %d %s" % (
        error["code"],
        error["title"].encode(),
    )
    assert set(error["error"]) == {"type", "message", "traceback"}
    if code is not None:
        assert (error["code"], error["error"]["type"]) == (code, error_type)
