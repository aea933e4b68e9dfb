"""When a connection's request has arrived far enough for a worker."""

import socket
import time

import pytest

from heat_lite.cmd import wsgi_gate

HEAD = b"POST /v1/p/stacks HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    "data,state",
    [
        (b"", wsgi_gate.CLOSED),
        (b"GET / HTTP/1.1\r\nHo", wsgi_gate.WAIT),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", wsgi_gate.READY),
        (b"GET / HTTP/1.1\nHost: x\n\n", wsgi_gate.READY),
        (HEAD + b"Content-Length: 10\r\n\r\n12345", wsgi_gate.WAIT),
        (HEAD + b"content-length: 10\r\n\r\n1234567890", wsgi_gate.READY),
        (
            HEAD + b"Content-Length: 9\r\nExpect: 100-continue\r\n\r\n",
            wsgi_gate.READY,
        ),
        (
            HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n",
            wsgi_gate.WAIT,
        ),
        (
            HEAD + b"Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
            wsgi_gate.READY,
        ),
        # Larger than the window: a worker reads the rest.
        (
            HEAD + b"Content-Length: 99999\r\n\r\n" + b"x" * wsgi_gate.WINDOW,
            wsgi_gate.READY,
        ),
        (b"G" * wsgi_gate.WINDOW, wsgi_gate.READY),
    ],
)
def test_request_state(data, state):
    assert wsgi_gate.request_state(data) == state


class _Conn:
    """What the gate needs of a cheroot connection: a socket, close()."""

    def __init__(self):
        self.socket, self.peer = socket.socketpair()
        self.closed = False

    def close(self):
        self.closed = True
        self.socket.close()


def _until(predicate, seconds=3):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def gate():
    dispatched = []
    made = wsgi_gate.Gate(dispatched.append, timeout=1, max_waiting=3)
    made.dispatched = dispatched
    yield made
    made.stop()


def test_gate_hands_over_complete_requests_only(gate):
    slow, fast = _Conn(), _Conn()
    slow.peer.sendall(b"GET / HTTP/1.1\r\nHost")
    gate.offer(slow)
    fast.peer.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    gate.offer(fast)
    assert _until(lambda: gate.dispatched == [fast])
    slow.peer.sendall(b": x\r\n\r\n")
    assert _until(lambda: gate.dispatched == [fast, slow])
    assert gate.waiting() == 0 and not slow.closed


def test_gate_closes_stalled_and_oldest(gate):
    conns = [_Conn() for _ in range(5)]
    for conn in conns:
        conn.peer.sendall(b"GET / HT")
        gate.offer(conn)
    # Three may wait: the two oldest go at once, the rest at the timeout.
    assert _until(lambda: conns[0].closed and conns[1].closed)
    assert not any(c.closed for c in conns[2:])
    assert _until(lambda: all(c.closed for c in conns))
    assert gate.dispatched == [] and gate.waiting() == 0


def test_gate_closes_what_the_client_closed(gate):
    conn = _Conn()
    gate.offer(conn)
    conn.peer.close()
    assert _until(lambda: conn.closed)
    assert gate.dispatched == []
