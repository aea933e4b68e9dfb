"""Fake worker APIs: the engine's side of the worker topic, made to lose
messages the way a broker restart or a partition does.

The dispatcher casts ``check_resources`` through ``worker_api``; a test
puts a ``LosingWorkerAPI`` in its place (``install``) and the casts it
chooses never arrive, so what happens next is the watchdog's re-drive.
"""

import contextlib


class LosingWorkerAPI:
    """Loses ``check_resources`` casts, passing the others on to ``real``.

    :param lose: how many of the first casts to lose (a broker restart).
    :param when: lose every cast for which ``when(stack_id)`` is true (a
        stack whose messages never arrive); with ``lose``, either one.
    """

    def __init__(self, real, lose=0, when=None):
        self.real = real
        self.lose = lose
        self.when = when
        self.lost = []

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        if self.lose > 0:
            self.lose -= 1
            self.lost.append(nodes)
            return
        if self.when is not None and self.when(stack_id):
            self.lost.append(nodes)
            return
        self.real.check_resources(ctxt, stack_id, traversal, nodes)


@contextlib.contextmanager
def losing(proc, lose=0, when=None):
    """Yield a ``LosingWorkerAPI`` in place of ``proc``'s worker API for
    the block, and put the real one back."""
    fake = LosingWorkerAPI(proc.dispatcher.worker_api, lose, when)
    proc.dispatcher.worker_api = fake
    try:
        yield fake
    finally:
        proc.dispatcher.worker_api = fake.real
