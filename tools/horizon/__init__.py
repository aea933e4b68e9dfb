"""A real Horizon with heat-dashboard in front of the test cloud.

``python -m tools.horizon --dir D start --cloud C`` serves Horizon 27.0.0
with heat-dashboard 16.0.0 (PyPI, a cached venv of their own, see
``venv``) on a free loopback port, logging in through the Keystone of the
test cloud in ``C`` (``tools.minicloud``); its Orchestration panels talk
to whatever that Keystone's catalog names ``orchestration``
(``python -m tools.minicloud --dir C heat-lite start`` makes that a
heat_lite). ``stop`` stops it by the PID recorded in ``D/horizon.json``.
"""
