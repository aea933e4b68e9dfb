"""The test harness: what tests/ and bench/ both use to run heat_lite.

Deployments of real processes (``deployment``, ``cloud``), private
backing services (``backends``, ``databases``), an engine inside the
test's process (``inprocess``, ``endpoints``), waiting with deadlines
(``polling``, ``helpers``) and fakes that break the engine's messaging
on purpose (``workers``).

tests/ and bench/ import this package and never each other for it; it
imports neither of them. It is not part of the heat_lite distribution
(setup.cfg lists the shipped packages).
"""
