"""Where an HTTP/1 request ends, read the way cheroot will read it.

The gate (``wsgi_gate``) must know when a request has arrived in full
before a worker thread gets it; if it understood a head differently from
cheroot (a Content-Length it missed, say), the worker would be left
reading the rest from a slow client. So the header block is parsed by
cheroot's own ``HeaderReader``, and the body framed as cheroot frames it:
chunked (HTTP/1.1 only) over Content-Length, no body without either.

``Framing.look(data)`` takes the bytes received so far (always the start
of the request, growing) and keeps what it learnt between calls, so a
chunked body is scanned once however it trickles in.
"""

import io
import re

from cheroot import server as cheroot_server

# A request head longer than this is refused (cheroot itself has no
# limit; no client of this API sends one a tenth as long).
MAX_HEAD = 32768
# What a chunk-size line may hold (size, extensions) before it is refused.
_MAX_CHUNK_LINE = 1024
# Framing a chunked body may add to it beyond twice its size.
_FRAMING = 65536
_CHUNK_SIZE_RE = re.compile(rb"[0-9a-fA-F]{1,16}")
# The header names ``_frame_body`` reads (lower-case), anywhere in a
# head. Sought with ``in`` on the lowered head: an IGNORECASE regex took
# seven times as long.
_FRAMING_NAMES = (b"content-length", b"transfer-encoding", b"expect")

# The states of a request (``Framing.look``):
CLOSED = "closed"  # the client closed the connection
WAIT = "wait"  # more is to come
READY = "ready"  # all a worker will read is there
HEAD_TOO_LARGE = "head too large"  # no end of head within MAX_HEAD
BODY_TOO_LARGE = "body too large"  # chunk framing past what may be held
MALFORMED = "malformed"  # chunk framing cheroot would fail on


def largest_request(limit):
    """The most bytes a request may take before it is READY or refused:
    a head, and a chunked body of ``limit`` bytes with all the framing
    (chunk-size lines, extensions) allowed around it."""
    return MAX_HEAD + 2 * limit + _FRAMING


class Framing:
    """What is known of one request so far.

    :param limit: the largest body the API reads (``max_json_body_size``):
        a body announced larger is READY at its head (the API answers
        413 without reading it), a chunked one once more than ``limit``
        bytes of it have arrived (the API stops reading there).

    After a look that found the head: ``head_end`` (bytes of the head),
    ``total`` (bytes of the whole request: None while a chunked body is
    incomplete), ``expect`` (the client waits for ``100 Continue``).
    """

    def __init__(self, limit):
        self.limit = limit
        self.head_end = None
        self.total = None
        self.expect = False
        self._chunks = None

    def look(self, data):
        """The state of the request whose first bytes are ``data``."""
        if not data:
            return CLOSED
        if self.head_end is None:
            state = self._read_head(data)
            if state is not None:
                return state
        if self._chunks is not None:
            state = self._chunks.scan(data)
            if state == READY and self._chunks.done:
                self.total = self._chunks.pos
            return state
        return READY if len(data) >= self.total else WAIT

    def _read_head(self, data):
        end = data.find(b"\r\n\r\n", 0, MAX_HEAD)
        if end < 0:
            first = data.find(b"\n", 0, MAX_HEAD)
            if first >= 0 and data[first - 1 : first] != b"\r":
                # cheroot answers 400 to a request line without CRLF.
                self.head_end = self.total = first + 1
                return READY
            return HEAD_TOO_LARGE if len(data) >= MAX_HEAD else WAIT
        self.head_end = end + 4
        head = bytes(data[: self.head_end])
        lowered = head.lower()
        if not any(name in lowered for name in _FRAMING_NAMES):
            # No header that frames a body or asks for 100 Continue, not
            # even inside another header's value: whatever cheroot makes
            # of this head (a request, or a 400), it reads no body. The
            # common GET, without parsing its headers twice: 11 -> 4 us
            # here, ~7% of the API's CPU on a poll before.
            self.total = self.head_end
            return READY
        headers, http11 = _parse_head(head)
        if headers is None:
            self.total = self.head_end  # cheroot answers 400 at once
            return READY
        return self._frame_body(headers, http11)

    def _frame_body(self, headers, http11):
        self.expect = headers.get(b"Expect", b"") == b"100-continue"
        codings = headers.get(b"Transfer-Encoding", b"") if http11 else b""
        codings = [c.strip().lower() for c in codings.split(b",") if c.strip()]
        if codings:
            if codings != [b"chunked"]:
                self.total = self.head_end  # cheroot answers 501
                return READY
            self._chunks = _ChunkScan(self.head_end, self.limit)
            return None
        try:
            length = int(headers.get(b"Content-Length", 0))
        except ValueError:
            length = 0  # cheroot answers 400 at once
        if length > self.limit:
            self.expect = False
            length = 0  # the API answers 413 without reading it
        self.total = self.head_end + max(length, 0)
        return None


def _parse_head(head):
    """(headers, HTTP/1.1 or later) as cheroot reads them, or (None,
    None) if cheroot would refuse the head."""
    lines = io.BytesIO(head)
    line = lines.readline()
    if line == b"\r\n":
        line = lines.readline()  # cheroot skips one empty line
    version = line.rstrip().rpartition(b" ")[2]
    if not version.startswith(b"HTTP/"):
        return None, None
    try:
        major, minor = (int(x) for x in version[5:].split(b".", 1))
        headers = cheroot_server.HeaderReader()(lines, {})
    except ValueError:
        return None, None
    return headers, (major, minor) >= (1, 1)


class _ChunkScan:
    """A chunked body, scanned once: ``pos`` is where the next chunk-size
    line starts (or, once ``done``, the request's end), ``decoded`` the
    body bytes so far."""

    def __init__(self, start, limit):
        self.pos = start
        self.limit = limit
        self.decoded = 0
        self.done = False
        self._raw_cap = largest_request(limit)

    def scan(self, data):
        while not self.done:
            if self.decoded > self.limit:
                return READY  # the API reads limit + 1 bytes and stops
            if self.pos > self._raw_cap:
                return BODY_TOO_LARGE  # a body mostly of framing
            state = self._next(data)
            if state is not None:
                return state
        return READY

    def _next(self, data):
        """Steps over one chunk (or the trailer): None when it did."""
        eol = data.find(b"\r\n", self.pos, self.pos + _MAX_CHUNK_LINE)
        if eol < 0:
            unended = len(data) - self.pos >= _MAX_CHUNK_LINE
            return MALFORMED if unended else WAIT
        line = bytes(data[self.pos : eol]).split(b";", 1)[0].strip()
        if not _CHUNK_SIZE_RE.fullmatch(line):
            return MALFORMED
        size = int(line, 16)
        if size == 0:
            return self._trailer(data, eol + 2)
        end = eol + 2 + size
        if len(data) < end + 2:
            return WAIT
        if data[end : end + 2] != b"\r\n":
            return MALFORMED
        self.decoded += size
        self.pos = end + 2
        return None

    def _trailer(self, data, start):
        end = data.find(b"\r\n\r\n", start - 2, start + MAX_HEAD)
        if end < 0:
            return WAIT if len(data) - start < MAX_HEAD else MALFORMED
        self.pos = end + 4
        self.done = True
        return None
