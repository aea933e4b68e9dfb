"""Token buckets of the webhook (``api.ratelimit``), on a clock the
test moves."""

from heat_lite.api import ratelimit


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_burst_then_the_rate():
    clock = Clock()
    buckets = ratelimit.Buckets(rate=0.5, burst=3, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0, 0, 0]
    assert buckets.take("a") == 2  # one token every 2 s
    assert buckets.take("b") == 0  # another app's bucket is full
    clock.now += 2
    assert buckets.take("a") == 0
    assert buckets.take("a") == 2
    clock.now += 60
    assert [buckets.take("a") for _ in range(4)] == [0, 0, 0, 2]


def test_a_refused_request_costs_nothing_more():
    clock = Clock()
    buckets = ratelimit.Buckets(rate=1, burst=1, clock=clock)
    assert buckets.take("a") == 0
    for _ in range(10):
        assert buckets.take("a") == 1
    clock.now += 1
    assert buckets.take("a") == 0


def test_rate_zero_is_no_limit():
    buckets = ratelimit.Buckets(rate=0, burst=1, clock=Clock())
    assert all(buckets.take("a") == 0 for _ in range(100))


def test_invented_urls_cannot_grow_memory():
    clock = Clock()
    buckets = ratelimit.Buckets(rate=1, burst=1, clock=clock, max_keys=3)
    for key in "abcdef":
        buckets.take(key)
    assert len(buckets._buckets) == 3
    assert buckets.take("f") == 1  # the most recent are kept
