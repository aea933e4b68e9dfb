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


def test_a_shared_read_never_stops_an_action_by_itself(monkeypatch):
    """A delete's first poll shared a read taken before the delete's own
    traversal was stored: it showed the update the delete overtook as
    FAILED, and the delete aborted itself (a CI run's DELETE_FAILED
    "DELETE aborted: stack UPDATE failed"). A stop is decided on a read
    of the poll's own; the shared one may only let the action go on."""
    import types

    from heat_lite.common.states import Action, Status
    from heat_lite.db import stacks as db_stacks
    from heat_lite.engine.worker import actions

    job = types.SimpleNamespace(
        record={"stack_id": "s"}, traversal="t-delete", action=Action.DELETE
    )
    own = {"state": ("t-delete", Action.DELETE, Status.IN_PROGRESS)}
    reads = []

    def read(stack_id):
        reads.append(stack_id)
        return own["state"]

    monkeypatch.setattr(db_stacks, "stack_state", read)
    got = []

    def stack_get(stack_id):
        got.append(stack_id)
        return {"status_reason": "overtaken"}

    monkeypatch.setattr(db_stacks, "stack_get", stack_get)

    def stale(stack_id):
        return ("t-update", Action.UPDATE, Status.FAILED)

    def current(stack_id):
        return ("t-delete", Action.DELETE, Status.IN_PROGRESS)

    assert actions.ActionRunner._abandoned(job, stale) is None
    assert reads == ["s"]  # confirmed by a read of its own
    assert got == []  # the shared read's stop built no error
    # A shared read that lets it go on is taken as it is.
    assert actions.ActionRunner._abandoned(job, current) is None
    assert reads == ["s"]
    # The stack really gone: the poll's own read stops the action.
    own["state"] = None
    stopped = actions.ActionRunner._abandoned(job, stale)
    assert isinstance(stopped, actions.exception.ActionAborted)
