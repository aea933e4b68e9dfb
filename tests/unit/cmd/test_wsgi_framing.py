"""Where a request ends, as cheroot will read it (``wsgi_framing``)."""

import pytest

from heat_lite.cmd import wsgi_framing as framing

HEAD = b"POST /v1/p/stacks HTTP/1.1\r\nHost: x\r\n"
CHUNKED = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
LIMIT = 100


def _look(data, limit=LIMIT):
    return framing.Framing(limit).look(data)


@pytest.mark.parametrize(
    "data,state",
    [
        (b"", framing.CLOSED),
        (b"GET / HTTP/1.1\r\nHo", framing.WAIT),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", framing.READY),
        (b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", framing.READY),
        # cheroot answers 400 to these at once, reading no more.
        (b"GET / HTTP/1.1\nHost: x\n", framing.READY),
        (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", framing.READY),
        (b"GET / HTTP/x\r\nHost: x\r\n\r\n", framing.READY),
        (HEAD + b"Content-Length: ten\r\n\r\n", framing.READY),
        (HEAD + b"Transfer-Encoding: gzip\r\n\r\n", framing.READY),
        (HEAD + b"Content-Length: 10\r\n\r\n12345", framing.WAIT),
        (HEAD + b"content-length: 10\r\n\r\n1234567890", framing.READY),
        # As cheroot reads it: a space before the colon, a folded line.
        (HEAD + b"Content-Length : 10\r\n\r\n12345", framing.WAIT),
        (HEAD + b"X-A: b\r\n c\r\nContent-Length: 9\r\n\r\n", framing.WAIT),
        # Announced larger than the API reads: it answers 413 at once.
        (HEAD + b"Content-Length: 101\r\n\r\n", framing.READY),
        (
            HEAD + b"Content-Length: 101\r\nExpect: 100-continue\r\n\r\n",
            framing.READY,
        ),
        (
            HEAD + b"Content-Length: 9\r\nExpect: 100-continue\r\n\r\n",
            framing.WAIT,
        ),
        (CHUNKED + b"5\r\nabcde\r\n", framing.WAIT),
        (CHUNKED + b"5\r\nabc", framing.WAIT),
        (CHUNKED + b"1\r\na\r\n0\r\n\r\n", framing.READY),
        (CHUNKED + b"1;ext=1\r\na\r\n0\r\nTrailer: x\r\n\r\n", framing.READY),
        (CHUNKED + b"1\r\na\r\n0\r\nTrailer: x\r\n", framing.WAIT),
        (CHUNKED + b"zz\r\n", framing.MALFORMED),
        (CHUNKED + b"1\r\naXY", framing.MALFORMED),
        (CHUNKED + b"1" * 2000, framing.MALFORMED),
        # More than the API reads: it stops there and answers 413.
        (CHUNKED + b"65\r\n" + b"x" * 101 + b"\r\n", framing.READY),
        # HTTP/1.0: cheroot ignores Transfer-Encoding.
        (
            b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            framing.READY,
        ),
        (b"G" * framing.MAX_HEAD, framing.HEAD_TOO_LARGE),
    ],
)
def test_look(data, state):
    assert _look(data) == state


@pytest.mark.parametrize(
    "head",
    [
        b"GET /v1/p/stacks/s/1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
        b"GET / HTTP/x\r\nHost: x\r\n\r\n",
        b"DELETE /v1/p/stacks/s/1 HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n",
    ],
)
def test_a_head_without_framing_headers_is_not_parsed(head, monkeypatch):
    """The fast path (no Content-Length, Transfer-Encoding or Expect
    anywhere in the head) ends the request where a full parse does, and
    does not parse: a head with one of them still is."""
    real = framing._parse_head
    full = framing.Framing(LIMIT)
    full.head_end = full.total = len(head)  # what a refused head gets
    headers, http11 = real(head)
    if headers is not None:
        full._frame_body(headers, http11)
    parsed = []
    monkeypatch.setattr(
        framing, "_parse_head", lambda h: parsed.append(h) or real(h)
    )
    frame = framing.Framing(LIMIT)
    assert frame.look(head + b"GET /next") == framing.READY
    assert frame.head_end == len(head)
    assert (frame.total, frame.expect) == (full.total, full.expect)
    assert parsed == []
    framed = head[:-2] + b"x-Expect-Not: 1\r\n\r\n"
    assert framing.Framing(LIMIT).look(framed) == framing.READY
    assert parsed == [framed]


def test_totals():
    frame = framing.Framing(LIMIT)
    data = HEAD + b"Content-Length: 10\r\nExpect: 100-continue\r\n\r\n"
    assert frame.look(data) == framing.WAIT
    assert frame.head_end == frame.total - 10 == len(data)
    assert frame.expect
    too_large = framing.Framing(LIMIT)
    assert (
        too_large.look(
            HEAD + b"Expect: 100-continue\r\nContent-Length: 101\r\n\r\n"
        )
        == framing.READY
    )
    assert not too_large.expect  # the API refuses it without reading


def test_chunks_scanned_once_as_they_come():
    body = b"3\r\nabc\r\n" * 20 + b"0\r\n\r\n"
    data = CHUNKED + body
    frame = framing.Framing(LIMIT)
    states = [frame.look(data[:end]) for end in range(len(CHUNKED), len(data))]
    assert set(states) == {framing.WAIT}
    assert frame._chunks.decoded == 60
    assert frame.look(data + b"GET / HTTP/1.1\r\n") == framing.READY
    assert frame.total == len(data)


def test_mostly_framing_is_too_large():
    chunk = b"1;" + b"e" * 1015 + b"\r\nx\r\n"
    data = CHUNKED + chunk * 99  # 99 bytes of body in 100 KB
    assert len(data) > framing.largest_request(LIMIT)
    assert _look(data) == framing.BODY_TOO_LARGE
