"""When a connection's request has arrived far enough for a worker."""

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
