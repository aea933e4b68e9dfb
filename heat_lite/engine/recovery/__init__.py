"""Keeping every stack moving when an engine dies or stalls.

``fencing`` is who this engine is (a stable id, an epoch per start) and
whether it may still act (its heartbeat); ``watchdog`` runs on every
engine each heartbeat interval and takes over the work of dead engines,
releases stale record locks, re-drives stalled traversals and fails
timed-out ones; ``redrive`` caps and backs off those re-drives.
"""
