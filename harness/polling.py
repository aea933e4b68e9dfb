"""Waiting in tests and benchmarks: every deadline loop lives here.

``until`` waits for something to become true; ``stays`` checks that
something stays true for a while (a duplicate that must never appear, a
stack that must not be failed). Neither sleeps a fixed time before an
assertion: ``until`` returns as soon as its predicate holds, ``stays``
fails as soon as its predicate does not. ``awhile`` is ``until`` for a
best effort (the caller judges the last value), ``retrying`` asks again
while a call raises a passing error, and ``ticks`` paces a loop that
keeps a load on for a given time.
"""

import time


def until(predicate, timeout=30, what="condition", interval=0.1, error=None):
    """Poll ``predicate`` until it returns a true value, and return it.

    A predicate that sees the wait is hopeless (a process exited, a stack
    reached another final state) raises at once, ending the wait.

    :param what: names the condition in the failure message; a callable
        is called for it (so the message can show the last state seen).
    :param error: the exception class raised on the deadline
        (``AssertionError`` unless told; a fixture's own start-up raises
        ``RuntimeError``, which pytest reports as an error).
    :raises AssertionError: ``predicate`` stayed false for ``timeout``
        seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    raise (error or AssertionError)(
        "%s not met in %ss" % (what() if callable(what) else what, timeout)
    )


def stays(predicate, seconds, what="condition", interval=0.05):
    """Check that ``predicate`` holds for ``seconds``, polling it.

    For negative claims ("no second traceback", "no re-drive after the
    limit"): the claim is checked all along, and fails at the first poll
    that sees it broken.

    :raises AssertionError: ``predicate`` returned a false value.
    """
    deadline = time.monotonic() + seconds
    while True:
        if not predicate():
            raise AssertionError(
                "%s broken within %ss"
                % (what() if callable(what) else what, seconds)
            )
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


def awhile(predicate, timeout, interval=0.1):
    """Poll ``predicate`` until it returns a true value or ``timeout``
    seconds pass; return its last value, true or not (a best effort:
    the caller decides what a false one means)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def retrying(call, errors, timeout=60, interval=0.2):
    """Return ``call()``, called again while it raises one of ``errors``
    (a service still recovering); the last such error is raised once
    ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except errors:
            if time.monotonic() >= deadline:
                raise
        time.sleep(interval)


def ticks(seconds, interval):
    """Yield the seconds left, every ``interval``, for ``seconds``: the
    pace of a loop that keeps something going (a load, a probe) for a
    while, ``for _ in polling.ticks(60, 1): ...``."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        yield left
        time.sleep(interval)


def stack_reaches(stack_id, expected, timeout=30, interval=0.05):
    """Wait until a stack row's ``<action>_<status>`` is ``expected``.

    For the in-process tests (the engine runs in the test's process and
    database): the row is read with ``db_api.stack_get``. Functional tests
    go through the API instead (``helpers.wait_for_status``).

    :returns: the stack row.
    """
    from heat_lite.db import api as db_api

    seen = {}

    def reached():
        seen["stack"] = stack = db_api.stack_get(stack_id)
        return stack if _state(stack) == expected else None

    def describe():
        stack = seen.get("stack") or {}
        return "stack %s to be %s (it is %s: %s)" % (
            stack_id,
            expected,
            _state(stack),
            stack.get("status_reason"),
        )

    return until(reached, timeout, describe, interval)


def _state(stack):
    return "%s_%s" % (stack.get("action"), stack.get("status"))
