"""Keeping slow clients away from the API's worker threads.

cheroot hands a connection to a worker thread as soon as it is accepted
(or, for a kept-alive one, as soon as it is readable), and the worker then
blocks reading the request, each read with its own socket timeout: a few
clients that send half a request, or trickle a body, would hold every
worker. The gate holds a connection instead, in one thread and one
selector, until its whole request has arrived (``wsgi_framing`` says when
that is, as cheroot will read it); only then does a worker get it.

* A request of up to ``WINDOW`` bytes is looked at with ``MSG_PEEK``: it
  waits in the kernel's socket buffer, and cheroot reads it itself.
* A larger one (a body up to ``max_json_body_size``, 1 MiB by default)
  would not fit there: the gate reads it into memory and the worker gets
  it with the bytes already in the connection's read buffer. What the
  gate may hold in all is a ``wsgi_buffer.Budget``: a request gets its
  room before it is read and keeps it until its worker is done with it;
  while the budget is spent, requests wait unread, first come first
  served (their deadline still runs). A request announcing more than the
  API reads is handed on at its head (the API answers 413 without
  reading it).
* ``Expect: 100-continue`` is answered by the gate once the body has its
  room, and the gate reads the body: cheroot's worker never waits for it.

Every request has one deadline, ``timeout`` seconds after the gate took it,
for its head and its body together; a connection that has not sent its
request by then is closed. At most ``max_waiting`` connections wait (the
oldest goes first).
"""

import collections
import heapq
import logging
import re
import select
import selectors
import socket
import threading
import time

from heat_lite.cmd import wsgi_buffer
from heat_lite.cmd import wsgi_framing as framing

LOG = logging.getLogger(__name__)
# Requests up to this size are peeked at, larger ones read.
WINDOW = framing.MAX_HEAD
# The most the gate reads from one connection at a time.
CHUNK = 262144
_FIRST_DELAY = 0.01
# A plain int: or-ing the two socket.MsgFlag members costs more than the
# peek itself (enum.Flag.__or__, on every request).
_PEEK = int(socket.MSG_PEEK | socket.MSG_DONTWAIT)
_MAX_DELAY = 0.5
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_EXPECT_RE = re.compile(rb"(?im)^expect[ \t]*:[ \t]*100-continue[ \t]*\r\n")
READY, WAIT, CLOSED = framing.READY, framing.WAIT, framing.CLOSED


def state_now(sock, limit):
    """The request state of ``sock`` without waiting (WAIT when nothing
    has arrived yet): lets the common case skip the gate's thread."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    if not poller.poll(0):
        return WAIT
    data = _peek(sock)
    return WAIT if data is None else framing.Framing(limit).look(data)


def _peek(sock):
    try:
        return sock.recv(WINDOW, _PEEK)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


class _Waiting:
    __slots__ = (
        "conn",
        "deadline",
        "delay",
        "seen",
        "framing",
        "buffer",
        "hold",
        "need",
    )

    def __init__(self, conn, deadline, limit):
        self.conn = conn
        self.deadline = deadline
        self.delay = _FIRST_DELAY
        self.seen = 0
        self.framing = framing.Framing(limit)
        self.buffer = None  # a wsgi_buffer.Buffer, once reading
        self.hold = None
        self.need = 0  # bytes it waits for from the budget (paused)


class Gate:
    """Holds connections until their request is there (see module doc).

    :param dispatch: ``dispatch(conn, data, hold)`` with a connection
        whose request is there: ``data`` the bytes the gate read of it
        (None: all still in the socket), ``hold`` what they hold of the
        budget (to release when the worker is done with the request).
    :param refuse: ``refuse(conn, state)`` answers a request the gate
        will not pass (``wsgi_framing``'s HEAD_TOO_LARGE, BODY_TOO_LARGE,
        MALFORMED) and closes it.
    :param limit: the largest body the API reads.
    :param budget: bytes all requests being read may hold at once.
    """

    def __init__(self, dispatch, refuse, timeout, max_waiting, limit, budget):
        self._dispatch = dispatch
        self._refuse = refuse
        self._timeout = timeout
        self._max_waiting = max_waiting
        self._limit = limit
        self._largest = framing.largest_request(limit)
        self.budget = wsgi_buffer.Budget(
            max(budget, self._largest), self._budget_freed
        )
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._incoming = collections.deque()
        self._waiting = collections.OrderedDict()  # fd -> _Waiting
        self._rechecks = []  # (time, fd)
        self._paused = collections.deque()  # fds waiting for the budget
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._stopped = False
        self._thread = threading.Thread(
            target=self._run, daemon=True, name="http-gate"
        )
        self._thread.start()

    def offer(self, conn, data=b""):
        """Take ``conn`` (from cheroot's selector thread); never blocks.
        ``data``: the start of its request, already off the socket."""
        with self._lock:
            self._incoming.append((conn, data))
        self._wake()

    def _budget_freed(self):
        if self._paused:
            self._wake()

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # a wake-up is already pending

    def stop(self):
        self._stopped = True
        self._wake()
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
                    self._check_safely(key.fd)
            self._take_incoming()
            self._run_rechecks()
            self._resume()
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
            taken, self._incoming = self._incoming, collections.deque()
        deadline = time.monotonic() + self._timeout
        for conn, data in taken:
            try:
                fd = conn.socket.fileno()
            except OSError:
                continue
            if fd < 0:
                continue
            entry = self._waiting[fd] = _Waiting(conn, deadline, self._limit)
            self._watch(fd)
            if data:
                # Off the socket already: it must be held, budget or not.
                entry.hold = wsgi_buffer.Hold(self.budget)
                room = max(self._largest, len(data))
                self.budget.reserve(entry.hold, room, force=True)
                self._start_reading(entry, room, data)
                self._after_read(fd, entry, len(data))
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

    def _check_safely(self, fd):
        """One connection's surprise must not stop the gate, and with it
        every request of the API."""
        try:
            self._check(fd)
        except Exception:
            LOG.exception("Dropping a connection the gate failed on")
            self._drop(fd)

    def _check(self, fd):
        entry = self._waiting.get(fd)
        if entry is None:
            self._unwatch(fd)
        elif entry.buffer is None:
            self._look(fd, entry)
        else:
            self._read(fd, entry)

    def _look(self, fd, entry):
        """A request that may fit the window: peek at it."""
        data = _peek(entry.conn.socket)
        if data is None:
            return
        state = entry.framing.look(data)
        if state != WAIT:
            self._finish(fd, entry, state)
        elif self._fits_window(entry.framing, data):
            self._look_later(fd, entry, len(data))
        elif self._reserve(entry):
            self._read(fd, entry)
        else:
            self._pause(fd, entry)

    @staticmethod
    def _fits_window(frame, data):
        if frame.expect:
            return False  # the body comes once the gate says so
        if frame.head_end is None:
            return True  # framing refuses a head past the window
        if frame.total is None:  # chunked
            return len(data) < WINDOW
        return frame.total <= WINDOW

    def _look_later(self, fd, entry, seen):
        """Readable but incomplete: look again later, less often while
        nothing new comes (the selector would wake us at once)."""
        self._unwatch(fd)
        entry.delay = (
            _FIRST_DELAY
            if seen > entry.seen
            else min(entry.delay * 2, _MAX_DELAY)
        )
        entry.seen = seen
        heapq.heappush(self._rechecks, (time.monotonic() + entry.delay, fd))

    def _reserve(self, entry):
        """Room for the whole request, or False (none is taken then)."""
        room = entry.framing.total or self._largest
        hold = wsgi_buffer.Hold(self.budget)
        if not self.budget.reserve(hold, room):
            entry.need = room
            return False
        entry.hold = hold
        self._start_reading(entry, room)
        return True

    def _start_reading(self, entry, room, data=b""):
        entry.buffer = wsgi_buffer.Buffer(room, data)
        if entry.framing.expect:
            try:
                entry.conn.socket.send(_CONTINUE, socket.MSG_DONTWAIT)
            except OSError:
                pass  # the client sends its body anyway after a while

    def _read(self, fd, entry):
        """A request larger than the window: read what has come."""
        buffer = entry.buffer
        want = min(buffer.room(), CHUNK)
        if entry.framing.total is not None:
            want = min(want, entry.framing.total - len(buffer))
        if want <= 0:  # a chunk larger than any body the API reads
            self._finish(fd, entry, framing.BODY_TOO_LARGE)
            return
        try:
            got = buffer.recv(entry.conn.socket, want)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            got = 0
        self._after_read(fd, entry, got)

    def _after_read(self, fd, entry, got):
        if not got:
            self._finish(fd, entry, CLOSED)
            return
        state = entry.framing.look(entry.buffer)
        if state != WAIT:
            self._finish(fd, entry, state)

    def _pause(self, fd, entry):
        """No room for it now: it waits unread (and unwatched) for its
        turn."""
        self._unwatch(fd)
        self._paused.append(fd)

    def _resume(self):
        """Requests that waited for room are read, first come first
        served, as long as the first fits."""
        while self._paused:
            entry = self._waiting.get(self._paused[0])
            if entry is None or entry.need == 0:
                self._paused.popleft()  # gone (or its fd reused)
                continue
            if not self._reserve(entry):
                return
            entry.need = 0
            self._watch(self._paused.popleft())

    def _finish(self, fd, entry, state):
        self._unwatch(fd)
        del self._waiting[fd]
        if state == READY:
            self._dispatch(entry.conn, *self._handover(entry))
            return
        self._let_go(entry)
        if state == CLOSED:
            entry.conn.close()
        else:
            self._refuse(entry.conn, state)

    @staticmethod
    def _handover(entry):
        """(data, hold) for the worker: the request as read, without the
        expectation the gate has answered already."""
        if entry.buffer is None:
            return None, None
        data = entry.buffer.take()
        # Give back the room a chunked body did not take.
        entry.hold.budget.give(entry.hold, entry.hold.held - len(data))
        if entry.framing.expect:
            end = entry.framing.head_end
            data = _EXPECT_RE.sub(b"", data[:end], count=1) + data[end:]
        return data, entry.hold

    def _run_rechecks(self):
        now = time.monotonic()
        while self._rechecks and self._rechecks[0][0] <= now:
            _when, fd = heapq.heappop(self._rechecks)
            entry = self._waiting.get(fd)
            if entry is not None and entry.buffer is None and not entry.need:
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
        if entry is None:
            return
        self._let_go(entry)
        try:
            entry.conn.close()
        except OSError:
            pass

    @staticmethod
    def _let_go(entry):
        """What a request the gate does not pass on holds."""
        if entry.buffer is not None:
            entry.buffer.close()
        if entry.hold is not None:
            entry.hold.release()
