"""Fixtures of the chaos suite: one network namespace for the session,
private servers per database kind (module scope), a fresh deployment per
test."""

import pytest

from harness import backends, netns
from tests.functional.chaos import deployment as chaos_deployment
from tests.functional.chaos import services


@pytest.fixture(scope="session")
def namespace():
    ns = netns.Namespace()
    try:
        ns.create()
    except netns.Unavailable as exc:
        backends.unavailable("ip netns", exc)
    yield ns
    ns.destroy()


@pytest.fixture(scope="session")
def rabbit(namespace):
    server = services.RabbitMQ(namespace.host_ip)
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture(scope="module", params=["postgresql", "mysql"])
def database(request, namespace):
    cls = (
        services.PostgreSQL
        if request.param == "postgresql"
        else services.MariaDB
    )
    server = cls(namespace.host_ip)
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture
def chaos(request, database, rabbit, namespace, tmp_path):
    """A started ChaosDeployment; servers are running again afterwards."""
    kind = "postgresql" if database.kind == "postgresql" else "mysql"
    dep = chaos_deployment.ChaosDeployment(
        kind, tmp_path, database, rabbit, namespace
    )
    try:
        dep.start()
        yield dep
    finally:
        namespace.heal()
        for server in (database, rabbit):
            if server.proc is None:
                server.start()
        dep.stop()
