"""Deployments of heat_lite shared by the functional tests.

``deployment`` runs every test on SQLite + fake:// (heat-lite-all), and on
PostgreSQL and MariaDB with separate API and two engine processes over
RabbitMQ.
"""

import http.server
import threading

import pytest

from harness import cloud as cloud_mod
from harness import deployment as deployment_mod
from tests.functional import browser as browser_mod
from tests.functional import cloud_ledger

KINDS = ["sqlite", "postgresql", "mysql"]


@pytest.fixture(scope="session")
def deployments(tmp_path_factory):
    """{kind: started Deployment}, each started the first time a test asks
    for it and stopped when the session (the xdist worker) ends.

    ``deployment`` below is parametrized at session scope, and pytest tears
    such a fixture down whenever the next test wants another parameter:
    under xdist a worker receives tests of every kind interleaved, so
    without this pool it would stop and start deployments over and over.
    """
    started = {}

    def get(kind):
        found = started.get(kind)
        if isinstance(found, BaseException):
            # A start that failed (or skipped: a missing service) once
            # does so for every test of that kind at once, not after
            # another start timeout each.
            raise found
        if found is None:
            dep = deployment_mod.Deployment(
                kind, tmp_path_factory.mktemp(kind)
            )
            try:
                dep.start()
            except BaseException as exc:  # pytest's skip/fail too
                dep.stop()
                started[kind] = exc
                raise
            started[kind] = found = dep
        return found

    yield get
    for dep in started.values():
        if not isinstance(dep, BaseException):
            dep.stop()


@pytest.fixture(scope="session", params=KINDS)
def deployment(request, deployments):
    return deployments(request.param)


@pytest.fixture(scope="module", params=browser_mod.NAMES)
def browser(request):
    """A real headless browser (tests/functional/browser.py): a module's
    tests run once in each browser, each starting it once."""
    yield from browser_mod.running(request.param)


@pytest.fixture
def heat(deployment):
    return deployment.client()


@pytest.fixture(scope="session")
def cloud(tmp_path_factory):
    """The test cloud (see harness/cloud.py), once per session."""
    yield from cloud_mod.running(tmp_path_factory)


@pytest.fixture(scope="session")
def heat_on_cloud(cloud, tmp_path_factory):
    """heat-lite-all acting in the test cloud as its member ``demo``;
    the catalog's orchestration endpoint."""
    yield from cloud_mod.heat_deployment(
        cloud, tmp_path_factory.mktemp("heat-on-cloud"), "demo"
    )


@pytest.fixture(scope="session")
def heat_as_admin(cloud, tmp_path_factory):
    """heat-lite-all acting in the test cloud as ``admin``."""
    yield from cloud_mod.heat_deployment(
        cloud, tmp_path_factory.mktemp("heat-as-admin"), "admin"
    )


@pytest.fixture(scope="session")
def cloud_sdk(cloud):
    """openstacksdk as the test cloud's member ``demo``."""
    conn = cloud.connect("demo")
    yield conn
    conn.close()


@pytest.fixture
def cloud_ledger_demo(cloud_sdk, heat_on_cloud):
    """Per test: every stack of ``heat_on_cloud`` deleted after it, and the
    demo project checked with openstacksdk (see cloud_ledger.py)."""
    yield from cloud_ledger.around(cloud_sdk, [heat_on_cloud.client()])


@pytest.fixture
def cloud_ledger_admin(cloud_sdk, heat_on_cloud, heat_as_admin):
    """cloud_ledger_demo, and the stacks of ``heat_as_admin`` deleted."""
    yield from cloud_ledger.around(
        cloud_sdk,
        [heat_on_cloud.client()],
        others=[heat_as_admin.client(project="admin")],
    )


@pytest.fixture
def image_server():
    """A loopback HTTP server with one 4 KiB raw image at /disk.raw."""
    data = b"\2" * 4096

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d/disk.raw" % server.server_address[1]
    server.shutdown()
    server.server_close()
