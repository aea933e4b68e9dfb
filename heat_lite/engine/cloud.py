"""What the engine asks of the cloud plugins, loaded by name.

The engine imports no cloud plugin module (``heat_lite.resources.
openstack``; ``tests/unit/test_layering.py`` says so). What it needs from
the cloud side -- who custom constraints act as during a call or a
resource's validation, forgetting the connection of a deleted trust -- is
a ``resources.services.CloudSide``: the ``openstack`` entry point of
``heat_lite.clouds`` (``resources.openstack.client.Cloud``), or
``resources.services.NoCloud`` in an installation without it.
"""

import functools
import logging

from stevedore import driver

from heat_lite.resources import services

LOG = logging.getLogger(__name__)
NAMESPACE = "heat_lite.clouds"
NAME = "openstack"


@functools.cache
def side() -> services.CloudSide:
    """The cloud plugins' side (loaded once per process)."""
    try:
        return driver.DriverManager(NAMESPACE, NAME).driver
    except Exception as exc:  # noqa: BLE001 - no cloud plugins installed
        LOG.info("No %s plugin %r (%s): no cloud calls", NAMESPACE, NAME, exc)
        return services.NoCloud()
