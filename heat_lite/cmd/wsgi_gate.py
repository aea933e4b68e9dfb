"""Keeping slow clients away from the API's worker threads.

cheroot hands a connection to a worker thread as soon as it is accepted
(or, for a kept-alive one, as soon as it is readable), and the worker then
blocks reading the request: a few hundred clients that send half a
request would hold every worker for the socket timeout. The gate holds a
connection instead, in one thread and one selector, until its request
head has arrived, and with it the body when that is small (up to
``WINDOW`` bytes, or what ``Expect: 100-continue`` lets the client hold
back); only then does a worker get it. It looks at the bytes with
``MSG_PEEK``, so cheroot still reads the request itself. A connection
that has not sent that much within ``timeout`` seconds is closed, and
at most ``max_waiting`` connections wait (the oldest goes first).
"""

import collections
import heapq
import logging
import re
import selectors
import socket
import threading
import time

LOG = logging.getLogger(__name__)
# Bytes of a request that must be there before a worker gets it.
WINDOW = 32768
_FIRST_DELAY = 0.01
_MAX_DELAY = 0.5
_LENGTH_RE = re.compile(rb"\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
_CHUNKED_RE = re.compile(rb"\ntransfer-encoding:[^\n]*chunked", re.IGNORECASE)
_CONTINUE_RE = re.compile(rb"\nexpect:[ \t]*100-continue", re.IGNORECASE)
READY, WAIT, CLOSED = "ready", "wait", "closed"


def request_state(data):
    """READY if ``data`` (what arrived so far) holds a request head and
    the part of its body a worker should not wait for; CLOSED if the
    client closed the connection; WAIT otherwise."""
    if not data:
        return CLOSED
    if len(data) >= WINDOW:
        return READY
    end = data.find(b"\r\n\r\n")
    end = end + 4 if end >= 0 else data.find(b"\n\n") + 2
    if end < 2:
        return WAIT
    head = data[:end]
    if _CONTINUE_RE.search(head):
        return READY
    if _CHUNKED_RE.search(head):
        return READY if data.endswith(b"0\r\n\r\n") else WAIT
    length = _LENGTH_RE.search(head)
    needed = int(length.group(1)) if length else 0
    return READY if len(data) - end >= needed else WAIT


def _peek(sock):
    try:
        return sock.recv(WINDOW, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


class _Waiting:
    __slots__ = ("conn", "deadline", "delay", "seen")

    def __init__(self, conn, deadline):
        self.conn = conn
        self.deadline = deadline
        self.delay = _FIRST_DELAY
        self.seen = 0


class Gate:
    """Holds connections until their request is there (see module doc).

    :param dispatch: called with a connection that is ready for a worker.
    """

    def __init__(self, dispatch, timeout, max_waiting):
        self._dispatch = dispatch
        self._timeout = timeout
        self._max_waiting = max_waiting
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._incoming = collections.deque()
        self._waiting = collections.OrderedDict()  # fd -> _Waiting
        self._rechecks = []  # (time, fd)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._stopped = False
        self._thread = threading.Thread(
            target=self._run, daemon=True, name="http-gate"
        )
        self._thread.start()

    def offer(self, conn):
        """Take ``conn`` (from cheroot's selector thread); never blocks."""
        with self._lock:
            self._incoming.append(conn)
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # a wake-up is already pending

    def stop(self):
        self._stopped = True
        self.offer(None)
        self._thread.join(5)

    def waiting(self):
        return len(self._waiting)

    # The gate's thread ---------------------------------------------------
    def _run(self):
        while not self._stopped:
            timeout = self._next_timeout()
            for key, _events in self._selector.select(timeout):
                if key.fileobj is self._wake_r:
                    self._drain_wakeups()
                else:
                    self._check(key.fd, readable=True)
            self._take_incoming()
            self._run_rechecks()
            self._expire()
        for fd in list(self._waiting):
            self._drop(fd)

    def _next_timeout(self):
        now = time.monotonic()
        until = [self._timeout]
        if self._rechecks:
            until.append(self._rechecks[0][0] - now)
        if self._waiting:
            first = next(iter(self._waiting.values()))
            until.append(first.deadline - now)
        return max(0.0, min(until))

    def _drain_wakeups(self):
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _take_incoming(self):
        with self._lock:
            conns, self._incoming = self._incoming, collections.deque()
        deadline = time.monotonic() + self._timeout
        for conn in conns:
            if conn is None:
                continue
            try:
                fd = conn.socket.fileno()
            except OSError:
                continue
            if fd < 0:
                continue
            self._waiting[fd] = _Waiting(conn, deadline)
            self._watch(fd)
            while len(self._waiting) > self._max_waiting:
                self._drop(next(iter(self._waiting)))

    def _watch(self, fd):
        try:
            self._selector.register(fd, selectors.EVENT_READ)
        except (KeyError, ValueError, OSError):
            pass

    def _unwatch(self, fd):
        try:
            self._selector.unregister(fd)
        except (KeyError, ValueError, OSError):
            pass

    def _check(self, fd, readable):
        entry = self._waiting.get(fd)
        if entry is None:
            self._unwatch(fd)
            return
        data = _peek(entry.conn.socket) if readable else None
        if data is None:
            return
        state = request_state(data)
        if state == WAIT:
            # Readable but incomplete: look again later, less often while
            # nothing new comes (the selector would wake us at once).
            self._unwatch(fd)
            entry.delay = (
                _FIRST_DELAY
                if len(data) > entry.seen
                else min(entry.delay * 2, _MAX_DELAY)
            )
            entry.seen = len(data)
            heapq.heappush(
                self._rechecks, (time.monotonic() + entry.delay, fd)
            )
            return
        self._unwatch(fd)
        del self._waiting[fd]
        if state == CLOSED:
            entry.conn.close()
        else:
            self._dispatch(entry.conn)

    def _run_rechecks(self):
        now = time.monotonic()
        while self._rechecks and self._rechecks[0][0] <= now:
            _when, fd = heapq.heappop(self._rechecks)
            if fd in self._waiting:
                self._watch(fd)

    def _expire(self):
        now = time.monotonic()
        while self._waiting:
            fd, entry = next(iter(self._waiting.items()))
            if entry.deadline > now:
                return
            self._drop(fd)

    def _drop(self, fd):
        entry = self._waiting.pop(fd, None)
        self._unwatch(fd)
        if entry is not None:
            try:
                entry.conn.close()
            except OSError:
                pass
