"""One read of a stack's state shared by the polls of one tick.

Every poll of a resource action asks whether its stack still wants it
(``ActionRunner._abandoned``: the stack's traversal, action and status).
A ResourceGroup of 20 servers polled every second made 20 such SELECTs a
second, one per server, all of the same nested stack's row: they were
most of the SQL of a server's create (one a tick, for as long as Nova
builds it). The polls of one stack that come within ``MAX_AGE`` seconds
of each other now share one read; concurrent askers wait for the read
in flight rather than make their own. So a stack cancelled, failed or
overtaken by a delete is noticed by a poll at most ``MAX_AGE`` later
than before (a poll is a second apart by default), and completion is
not delayed at all (a finished action does not read the state).
"""

import threading
import time

#: Seconds a stack's state read by one poll answers the others.
MAX_AGE = 0.25
#: Past this many stacks held, those older than MAX_AGE are dropped.
MAX_HELD = 256


class SharedStates:
    """``get(stack_id)``: ``read(stack_id)``, shared as said above."""

    def __init__(self, read, max_age=MAX_AGE):
        self._read = read
        self._max_age = max_age
        self._lock = threading.Lock()
        self._held = {}  # {stack id: (monotonic start of the read, state)}
        self._reading = {}  # {stack id: lock held by the one reading}

    def _fresh(self, stack_id, asked):
        hit = self._held.get(stack_id)
        if hit is not None and hit[0] >= asked - self._max_age:
            return hit
        return None

    def get(self, stack_id):
        asked = time.monotonic()
        with self._lock:
            hit = self._fresh(stack_id, asked)
            if hit is not None:
                return hit[1]
            reading = self._reading.setdefault(stack_id, threading.Lock())
        with reading:
            with self._lock:
                hit = self._fresh(stack_id, asked)
                if hit is not None:
                    return hit[1]
            started = time.monotonic()
            state = self._read(stack_id)
            with self._lock:
                self._held[stack_id] = (started, state)
                if len(self._held) > MAX_HELD:
                    self._drop_old(started)
                if self._reading.get(stack_id) is reading:
                    del self._reading[stack_id]
            return state

    def _drop_old(self, now):
        for stack_id in [
            s
            for s, (when, _) in self._held.items()
            if when < now - self._max_age
        ]:
            del self._held[stack_id]
