"""The polls' shared reads of their stacks' states (``stack_states``)."""

import threading

from heat_lite.engine.worker import stack_states


def _counted():
    reads = []

    def read(stack_id):
        reads.append(stack_id)
        return ("t%d" % len(reads), "CREATE", "IN_PROGRESS")

    return reads, read


def test_polls_within_max_age_share_one_read_per_stack():
    reads, read = _counted()
    states = stack_states.SharedStates(read, max_age=600)
    first = states.get("a")
    assert states.get("a") == first == ("t1", "CREATE", "IN_PROGRESS")
    states.get("b")
    assert reads == ["a", "b"]


def test_a_read_older_than_max_age_is_not_used():
    reads, read = _counted()
    states = stack_states.SharedStates(read, max_age=0)
    states.get("a")
    assert states.get("a")[0] == "t2"
    assert reads == ["a", "a"]


def test_concurrent_polls_wait_for_the_read_in_flight():
    reads = []
    started, release = threading.Event(), threading.Event()

    def read(stack_id):
        reads.append(stack_id)
        started.set()
        assert release.wait(60)
        return ("t", "CREATE", "IN_PROGRESS")

    states = stack_states.SharedStates(read, max_age=600)
    answers = []
    first = threading.Thread(target=lambda: answers.append(states.get("a")))
    first.start()
    assert started.wait(60)
    others = [
        threading.Thread(target=lambda: answers.append(states.get("a")))
        for _ in range(4)
    ]
    for thread in others:
        thread.start()
    release.set()
    for thread in [first, *others]:
        thread.join(60)
    assert reads == ["a"]
    assert answers == [("t", "CREATE", "IN_PROGRESS")] * 5
