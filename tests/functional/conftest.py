"""Deployments of heat_lite shared by the functional tests.

``deployment`` runs every test on SQLite + fake:// (heat-lite-all), and on
PostgreSQL and MariaDB with separate API and two engine processes over
RabbitMQ.
"""

import pytest

from tests.functional import deployment as deployment_mod

KINDS = ["sqlite", "postgresql", "mysql"]


@pytest.fixture(scope="session", params=KINDS)
def deployment(request, tmp_path_factory):
    dep = deployment_mod.Deployment(
        request.param, tmp_path_factory.mktemp(request.param)
    )
    dep.start()
    yield dep
    dep.stop()


@pytest.fixture
def heat(deployment):
    return deployment.client()
