"""One look for every target a rollout engine follows.

A target follows its stack's update until it is over. Polled one by one,
a batch of 100 targets costs 100 reads every interval for as long as the
batch runs -- more engine CPU than the updates themselves. Instead the
waiting targets share one look: every ``interval`` one of them reads the
state of all their stacks in a single query (``db.rollouts.stack_probes``)
and wakes the others; a target reads what became of its update
(``verify.outcome``) only when its stack's state or reason changed.
"""

import collections
import threading
import time

#: The probe of a stack that is deleted (or gone).
GONE = ("GONE",)


class StackWatch:
    """The shared looks of one engine process's targets.

    :param probe: callable [stack id] -> {stack id: state tuple} of the
        live ones (``db.rollouts.stack_probes``).
    :param interval: seconds between two looks.
    """

    def __init__(self, probe, interval):
        self.probe = probe
        self.interval = interval
        self._cond = threading.Condition()
        self._waiting = collections.Counter()
        # {stack id: (monotonic time the look started, probe)}
        self._seen = {}
        self._looked = float("-inf")
        self._looking = False

    def wait(self, stack_id, last, longest=5.0):
        """The stack's probe from a look started after this call, once it
        differs from ``last`` (None: the first look), or ``last`` after
        ``longest`` seconds without a change."""
        called = time.monotonic()
        deadline = called + longest
        with self._cond:
            self._waiting[stack_id] += 1
            try:
                while True:
                    seen = self._seen.get(stack_id)
                    if seen and seen[0] >= called and seen[1] != last:
                        return seen[1]
                    now = time.monotonic()
                    if now >= deadline:
                        return last
                    due = self._looked + self.interval - now
                    if not self._looking and due <= 0:
                        self._look()
                        continue
                    pause = self.interval if self._looking else due
                    self._cond.wait(min(pause, deadline - now))
            finally:
                self._waiting[stack_id] -= 1
                if not self._waiting[stack_id]:
                    del self._waiting[stack_id]
                    self._seen.pop(stack_id, None)

    def _look(self):
        """Read every waited-on stack (the lock is released meanwhile)."""
        self._looking = True
        ids = list(self._waiting)
        started = time.monotonic()
        found = {}
        self._cond.release()
        try:
            found = self.probe(ids)
        finally:
            self._cond.acquire()
            self._looking = False
            self._looked = started
            self._cond.notify_all()
        for stack_id in ids:
            self._seen[stack_id] = (started, found.get(stack_id, GONE))
