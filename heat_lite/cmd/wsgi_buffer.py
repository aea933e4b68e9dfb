"""Memory for the requests the gate reads (``wsgi_gate``): a ``Budget``
shared by all of them, and one ``Buffer`` per request.

A request is given its whole room before the gate reads any of it (its
Content-Length, or the most a chunked body may take), and keeps it until
its worker is done with it: requests that together want more than the
budget wait their turn instead of each holding half of what it needs, so
a few large uploads cannot wedge each other.
"""

import mmap
import socket
import threading


class Budget:
    """Bytes of requests the API may hold in memory at once, shared by the
    gate (which reserves them) and the worker threads (which give them
    back when done with a request): each request's share is a ``Hold``."""

    def __init__(self, size, on_free=None):
        self.size = size
        self.used = 0
        self._lock = threading.Lock()
        self._on_free = on_free

    def free(self):
        return self.size - self.used

    def reserve(self, hold, count, force=False):
        """``count`` bytes more for ``hold``, all or none (all anyway if
        ``force``: bytes already in memory): whether it got them."""
        with self._lock:
            if not force and count > self.size - self.used:
                return False
            self.used += count
            hold.held += count
            return True

    def give(self, hold, count):
        with self._lock:
            count = min(count, hold.held)
            hold.held -= count
            self.used -= count
        if count and self._on_free is not None:
            self._on_free()


class Hold:
    """What one request holds of a Budget. ``release`` gives it all back;
    safe to call again, and from any thread."""

    __slots__ = ("budget", "held")

    def __init__(self, budget):
        self.budget = budget
        self.held = 0

    def release(self):
        self.budget.give(self, self.held)


class Buffer:
    """The bytes of one request read off its socket, in an anonymous
    memory mapping of its whole room: pages are only taken as bytes
    arrive, and are the system's again as soon as it is closed (a
    bytearray's would grow by copies and stay with the allocator). Reads
    as ``wsgi_framing`` needs like the bytes received so far (``len``,
    slices, ``find``)."""

    def __init__(self, capacity, data=b""):
        self.capacity = max(capacity, len(data), 1)
        self._map = mmap.mmap(-1, self.capacity)
        self._map[: len(data)] = data
        self._size = len(data)

    def __len__(self):
        return self._size

    def __getitem__(self, part):
        start, stop, _step = part.indices(self._size)
        return self._map[start:stop]

    def find(self, sub, start=0, end=None):
        end = self._size if end is None else min(end, self._size)
        return self._map.find(sub, start, end)

    def room(self):
        return self.capacity - self._size

    def recv(self, sock, count):
        """Read up to ``count`` bytes more: how many (0: the peer closed).

        :raises BlockingIOError: nothing to read now.
        """
        with memoryview(self._map) as view:
            with view[self._size : self._size + count] as tail:
                got = sock.recv_into(tail, count, socket.MSG_DONTWAIT)
        self._size += got
        return got

    def take(self):
        """The bytes, as one bytes object; the mapping is closed."""
        data = self._map[: self._size]
        self.close()
        return data

    def close(self):
        self._map.close()
