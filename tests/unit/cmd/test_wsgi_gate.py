"""The gate: no worker gets a connection before its whole request is
there, and what that costs in memory is bounded."""

import socket
import threading

import pytest

from harness import polling
from heat_lite.cmd import wsgi_buffer, wsgi_gate
from heat_lite.cmd import wsgi_framing as framing

LIMIT = 100000


def post(length, extra=b""):
    return (
        b"POST /v1/p/stacks HTTP/1.1\r\nHost: x\r\n"
        b"Content-Length: %d\r\n%s\r\n" % (length, extra)
    )


class _Conn:
    """What the gate needs of a cheroot connection: a socket, close()."""

    def __init__(self):
        self.socket, self.peer = socket.socketpair()
        self.closed = False

    def close(self):
        self.closed = True
        self.socket.close()

    def send_later(self, data):
        """Send without blocking the test on a full socket buffer."""
        thread = threading.Thread(target=self.peer.sendall, args=(data,))
        thread.start()
        return thread


class _Gate:
    def __init__(self, timeout=1, max_waiting=3, limit=LIMIT):
        self.dispatched = []
        self.refused = []
        self.gate = wsgi_gate.Gate(
            lambda conn, data, hold: self.dispatched.append(
                (conn, data, hold)
            ),
            lambda conn, state: self.refused.append((conn, state)),
            timeout,
            max_waiting,
            limit,
            0,  # the least it may be: largest_request(limit)
        )

    def conns(self):
        return [conn for conn, _data, _hold in self.dispatched]


@pytest.fixture
def gate():
    made = _Gate()
    yield made
    made.gate.stop()


def test_gate_hands_over_complete_requests_only(gate):
    slow, fast = _Conn(), _Conn()
    slow.peer.sendall(b"GET / HTTP/1.1\r\nHost")
    gate.gate.offer(slow)
    fast.peer.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    gate.gate.offer(fast)
    polling.until(lambda: gate.conns() == [fast], 3)
    slow.peer.sendall(b": x\r\n\r\n")
    polling.until(lambda: gate.conns() == [fast, slow], 3)
    # Small requests are left in the socket for cheroot to read.
    assert gate.dispatched[0][1:] == (None, None)
    assert gate.gate.waiting() == 0 and not slow.closed


def test_gate_closes_stalled_and_oldest(gate):
    conns = [_Conn() for _ in range(5)]
    for conn in conns:
        conn.peer.sendall(b"GET / HT")
        gate.gate.offer(conn)
    # Three may wait: the two oldest go at once, the rest at the timeout.
    polling.until(lambda: conns[0].closed and conns[1].closed, 3)
    assert not any(c.closed for c in conns[2:])
    polling.until(lambda: all(c.closed for c in conns), 3)
    assert gate.dispatched == [] and gate.gate.waiting() == 0


def test_gate_closes_what_the_client_closed(gate):
    conn = _Conn()
    gate.gate.offer(conn)
    conn.peer.close()
    polling.until(lambda: conn.closed, 3)
    assert gate.dispatched == []


def test_a_large_body_waits_for_its_last_byte(gate):
    """Larger than the window: read into memory, and the worker gets it
    only once the body is all there (issue 26)."""
    conn = _Conn()
    request = post(60000) + b"x" * 60000
    conn.send_later(request[:-1]).join()
    gate.gate.offer(conn)
    polling.stays(lambda: not gate.dispatched, 0.3, "nothing dispatched")
    budget = gate.gate.budget
    assert budget.used == len(request)  # its room, taken first
    conn.peer.sendall(request[-1:])
    polling.until(lambda: gate.dispatched, 3)
    _conn, data, hold = gate.dispatched[0]
    assert data == request and hold.held == len(request)
    hold.release()
    hold.release()  # a second release gives nothing back twice
    assert budget.used == 0


def test_a_trickled_body_meets_its_deadline(gate):
    """One deadline for head and body: bytes that keep coming do not
    extend it."""
    conn = _Conn()
    conn.send_later(post(60000) + b"x" * 40000).join()
    gate.gate.offer(conn)

    def trickle():
        if not conn.closed:
            conn.peer.send(b"x")
        return conn.closed

    polling.until(trickle, 3, interval=0.05)
    assert gate.dispatched == [] and gate.gate.budget.used == 0


def test_expect_100_continue_is_answered_by_the_gate(gate):
    conn = _Conn()
    head = post(40000, b"Expect: 100-continue\r\n")
    conn.peer.sendall(head)
    gate.gate.offer(conn)
    conn.peer.settimeout(3)
    assert conn.peer.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
    conn.send_later(b"y" * 40000)
    polling.until(lambda: gate.dispatched, 3)
    # cheroot would answer the expectation once more: it no longer sees it.
    assert gate.dispatched[0][1] == post(40000) + b"y" * 40000


def test_the_budget_is_shared_first_come_first_served():
    """Two requests take all the room; the third waits unread until the
    first's worker is done with it, then goes through."""
    body = 150000
    made = _Gate(timeout=10, max_waiting=10, limit=body)
    try:
        # Room for two such requests, not three.
        size = made.gate.budget.size
        assert size == framing.largest_request(body)
        assert 2 * len(post(body)) + 2 * body < size < 3 * body
        total = len(post(body)) + body
        conns = [_Conn() for _ in range(3)]
        for i, conn in enumerate(conns):
            conn.peer.sendall(post(body))
            made.gate.offer(conn)
            room = min(i + 1, 2) * total
            polling.until(lambda r=room: made.gate.budget.used == r, 3)
        senders = [c.send_later(b"z" * body) for c in conns]
        polling.until(lambda: len(made.dispatched) == 2, 5)
        # The two with room, in whichever order their bodies completed
        # (their senders race: under load the second may finish first).
        assert sorted(map(conns.index, made.conns())) == [0, 1]
        polling.stays(lambda: len(made.dispatched) == 2, 0.3, "C waits")
        made.dispatched[0][2].release()  # its worker is done
        polling.until(lambda: len(made.dispatched) == 3, 5)
        for sender in senders:
            sender.join()
        assert made.dispatched[2][1] == post(body) + b"z" * body
    finally:
        made.gate.stop()


@pytest.mark.parametrize(
    "data,state",
    [
        (b"G" * framing.MAX_HEAD, framing.HEAD_TOO_LARGE),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            framing.MALFORMED,
        ),
    ],
)
def test_refused_requests(gate, data, state):
    conn = _Conn()
    conn.send_later(data).join()
    gate.gate.offer(conn)
    polling.until(lambda: gate.refused, 3)
    assert gate.refused == [(conn, state)] and not gate.dispatched


def test_a_chunked_body_past_the_window(gate):
    conn = _Conn()
    chunk = b"%x\r\n%s\r\n" % (1000, b"c" * 1000)
    request = (
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunk * 40
        + b"0\r\n\r\n"
    )
    conn.send_later(request[:-1]).join()
    gate.gate.offer(conn)
    polling.stays(lambda: not gate.dispatched, 0.3, "nothing dispatched")
    conn.peer.sendall(request[-1:])
    polling.until(lambda: gate.dispatched, 3)
    data, hold = gate.dispatched[0][1:]
    # The room a chunked body did not take is given back at once.
    assert data == request and hold.held == len(request)


def test_bytes_taken_off_the_socket_already(gate):
    """A pipelined request cheroot read past the last one."""
    conn = _Conn()
    gate.gate.offer(conn, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    polling.until(lambda: gate.dispatched, 3)
    assert gate.dispatched[0][1] == b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def test_buffer_reads_like_bytes():
    left, right = socket.socketpair()
    with left, right:
        buffer = wsgi_buffer.Buffer(100, b"ab\r\n")
        right.sendall(b"cd\r\n\r\n")
        assert buffer.recv(left, 50) == 6
        assert len(buffer) == 10 and buffer.room() == 90
        assert buffer.find(b"\r\n\r\n") == 6 and buffer.find(b"zz") == -1
        assert buffer[2:4] == b"\r\n" and buffer[8:50] == b"\r\n"
        assert buffer.take() == b"ab\r\ncd\r\n\r\n"
