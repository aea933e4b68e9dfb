"""Stack identities the API found by stack ID, kept in the process.

A lookup URL (``/stacks/<id>``, ``/stacks/<id>/resources``...) answers a
302 to the stack's canonical URL, and clients that know only the ID
(Horizon's legacy heatclient, every poll of an open Topology tab) ask it
again and again. A stack's name never changes for its ID, and its ID
stays its identity once deleted (the redirect of a deleted stack shows it
DELETE_COMPLETE, as Heat's does), so what the engine answered for an ID
holds for good: it is kept per project (the engine's lookup is scoped by
the caller's project, and so is the key) and the engine is asked once.
A lookup by name is always asked: a name may be taken again by a new
stack. A purged stack's 302 still goes out; its canonical URL is the 404.
"""

import threading

MAX_KEPT = 10000


class Identities:
    """{(project, stack ID): identity}, emptied when it grows past
    ``size`` entries (a bound, not an eviction policy: it refills as
    clients ask)."""

    def __init__(self, size=MAX_KEPT):
        self.size = size
        self._found = {}
        self._lock = threading.Lock()

    def identify(self, engine, ctxt, name):
        """The stack identity of ``name`` (an ID or a name) as
        ``engine.identify_stack`` gives it, asking it only once per ID."""
        key = (ctxt.project_id, name)
        found = self._found.get(key)
        if found is not None:
            return found
        found = engine.identify_stack(ctxt, name)
        if found.get("stack_id") == name:
            with self._lock:
                if len(self._found) >= self.size:
                    self._found.clear()
                self._found[key] = found
        return found
