"""``engine.fleet.watch``: the targets waiting on their stacks share one
look per interval, and each wakes only when its own stack changed."""

import threading
import time

import pytest

from heat_lite.engine.fleet import watch
from tests import polling


class Stacks:
    """Stack states a test changes; counts the looks at them."""

    def __init__(self, states):
        self.states = dict(states)
        self.looks = []
        self.lock = threading.Lock()

    def probe(self, ids):
        with self.lock:
            self.looks.append(sorted(ids))
            return {i: self.states[i] for i in ids if i in self.states}


def test_one_look_for_every_waiting_target():
    busy = ("t", "UPDATE", "IN_PROGRESS", "")
    stacks = Stacks({"s%d" % i: busy for i in range(20)})
    w = watch.StackWatch(stacks.probe, 0.05)
    first = {}

    def follow(stack_id):
        first[stack_id] = w.wait(stack_id, None)

    threads = [
        threading.Thread(target=follow, args=(s,)) for s in stacks.states
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert first == stacks.states
    # 20 targets, a handful of looks (one per interval), not 20.
    assert len(stacks.looks) < 10, stacks.looks
    assert any(len(ids) > 1 for ids in stacks.looks)


def test_wakes_on_a_change_of_its_own_stack_only():
    busy = ("t", "UPDATE", "IN_PROGRESS", "Stack UPDATE started")
    stacks = Stacks({"a": busy, "b": busy})
    w = watch.StackWatch(stacks.probe, 0.02)
    seen = w.wait("a", None)
    assert seen == busy
    woken = []
    thread = threading.Thread(target=lambda: woken.append(w.wait("a", busy)))
    thread.start()
    with stacks.lock:
        stacks.states["b"] = ("t", "UPDATE", "COMPLETE", "done")
    polling.stays(lambda: not woken, 0.3, "a woken by b's change")
    done = ("t", "UPDATE", "COMPLETE", "done")
    with stacks.lock:
        stacks.states["a"] = done
    thread.join(5)
    assert woken == [done]


def test_gone_stacks_and_quiet_ones():
    stacks = Stacks({"here": ("t", "UPDATE", "IN_PROGRESS", "")})
    w = watch.StackWatch(stacks.probe, 0.02)
    assert w.wait("deleted", None) == watch.GONE
    quiet = w.wait("here", None)
    start = time.monotonic()
    assert w.wait("here", quiet, longest=0.2) == quiet
    assert time.monotonic() - start >= 0.2
    # Nothing is kept of stacks no target waits on any more.
    assert not w._seen and not w._waiting


def test_a_failed_look_is_raised_and_the_next_one_made():
    calls = []

    def probe(ids):
        calls.append(ids)
        if len(calls) == 1:
            raise RuntimeError("database gone")
        return {i: ("t", "UPDATE", "COMPLETE", "") for i in ids}

    w = watch.StackWatch(probe, 0.02)
    with pytest.raises(RuntimeError):
        w.wait("s", None)
    assert w.wait("s", None) == ("t", "UPDATE", "COMPLETE", "")
