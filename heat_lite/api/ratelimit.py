"""Token buckets: how many webhook deliveries an app's URL accepts.

One bucket per key (the webhook URL's project and app segments, as sent:
whether the app exists or not, so the answer reveals nothing), kept in
this API process only: N API processes accept up to N times
``[apps] webhook_rate``. That bounds what one URL costs the engine (the
secret's decryption, the HMAC, a row) without a shared store; the
signature remains what decides whether a delivery is trusted. Every
delivery takes a token, forged ones too: a flood at one app's URL slows
that app's pushes, nobody else's.

At most ``MAX_KEYS`` buckets are kept; the least recently used is
forgotten first (a forgotten bucket comes back full), so a caller
inventing URLs cannot grow this process's memory.
"""

import collections
import math
import threading
import time

MAX_KEYS = 10000


class Buckets:
    """Token buckets of ``rate`` tokens a second, ``burst`` at most."""

    def __init__(self, rate, burst, clock=time.monotonic, max_keys=MAX_KEYS):
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._max_keys = max_keys
        self._buckets = collections.OrderedDict()  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key):
        """Take a token of ``key``'s bucket.

        :returns: 0 if there was one, else the whole seconds until there
            is (at least 1).
        """
        if self.rate <= 0:
            return 0
        now = self._clock()
        with self._lock:
            tokens, when = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - when) * self.rate)
            wait = 0
            if tokens >= 1:
                tokens -= 1
            else:
                wait = max(1, math.ceil((1 - tokens) / self.rate))
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
        return wait
