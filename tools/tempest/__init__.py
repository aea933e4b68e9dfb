"""Heat's own test suite (heat-tempest-plugin on tempest) against heat_lite.

``python -m tools.tempest run`` starts the test cloud (``tools.minicloud``)
and heat_lite in keystone mode, registers heat_lite as the cloud's
orchestration service, writes tempest's configuration for that cloud and
runs the chosen suite from a venv of tempest's own; see doc/tempest.md.
"""
