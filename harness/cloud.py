"""The test cloud (``tools.minicloud``) for tests marked ``cloud``.

With ``HEAT_LITE_TEST_CLOUD=<dir>`` the tests use the cloud already
running there (``python -m tools.minicloud --dir <dir> start``) and leave
it running: start it once by hand and reuse it while iterating.
Otherwise the first test that needs it starts one for the session (any
free loopback ports, a private database prefix and vhost) and stops it
at the end. A cloud that cannot start makes the tests skip, except under
``CI=true`` where that is a failure.

Each test session sees an admin (``admin`` on project ``admin``) and a
non-admin (``demo``, role ``member`` on project ``demo``), the public
image ``mc-image``, flavors ``mc-tiny`` and ``mc-small``, the network
``mc-net`` shared with every project and the external network ``public``.
"""

import os
import secrets
import time

from harness import backends, polling
from harness import deployment as deployment_mod
from tools.minicloud import catalog, layout, seed, venv
from tools.minicloud import cloud as cloud_mod

ENV = "HEAT_LITE_TEST_CLOUD"


class TestCloud:
    """A running cloud: its layout and clients for its users."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, lay):
        self.layout = lay
        self.image = seed.IMAGE
        self.flavor = seed.FLAVOR
        self.network = seed.NETWORK

    def connect(self, user="demo"):
        """An openstacksdk Connection as ``user`` (admin or demo)."""
        return catalog.connect(self.layout, user, user)

    def register_orchestration(self, url):
        catalog.register_orchestration(self.layout, url)

    def heat_conf(self, user="demo", poll_interval=0.2):
        """heat_lite config making its cloud types act as ``user``."""
        return (
            "\n[openstack]\ncloud = minicloud-%s\nclouds_yaml = %s\n"
            "poll_interval = %s\n"
            % (user, self.layout.clouds_yaml, poll_interval)
        )


def _start(workdir):
    venv_path, install = venv.ensure()
    lay = layout.Layout(
        dir=str(workdir),
        venv=venv_path,
        ports=layout.pick_ports(0),
        mysql_url=backends.MYSQL_URL,
        rabbit=backends.RABBIT,
        password=secrets.token_hex(8),
    )
    lay.timings["install"] = round(install, 1)
    began = time.monotonic()
    cloud_mod.Cloud(lay, log=lambda *a: None).start()
    lay.timings["start"] = round(time.monotonic() - began, 1)
    lay.save()
    return lay


def running(tmp_path_factory):
    """Yield a TestCloud: the body of the session fixture."""
    given = os.environ.get(ENV)
    if given:
        try:
            lay = layout.Layout.load(given)
        except FileNotFoundError:
            backends.unavailable(
                "The test cloud", "%s=%s holds no state.json" % (ENV, given)
            )
        yield TestCloud(lay)
        return
    try:
        lay = _start(tmp_path_factory.mktemp("minicloud"))
    except Exception as exc:  # any failure to start: skip, or fail in CI
        backends.unavailable(
            "The test cloud", "%s: %s" % (type(exc).__name__, exc)
        )
    try:
        yield TestCloud(lay)
    finally:
        cloud_mod.Cloud(lay, log=lambda *a: None).stop()


def wait_gone(find, timeout=60):
    """Poll ``find()`` until it returns None; raise on the deadline."""
    polling.until(
        lambda: find() is None,
        timeout,
        lambda: "gone (still there: %s)" % (find(),),
        interval=0.3,
    )


def outputs(heat, stack_id):
    """{output key: value} of a stack."""
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def physical(heat, stack_id):
    """{resource name: physical ID} of a stack."""
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def wait_server(conn, server_id, status, timeout=60):
    """Poll until Nova shows the server in ``status``."""
    polling.until(
        lambda: conn.compute.get_server(server_id).status == status,
        timeout,
        "server %s %s" % (server_id, status),
        interval=0.3,
    )


def heat_deployment(cloud, workdir, user):
    """A heat-lite-all (noauth, SQLite) acting in ``cloud`` as ``user``:
    the body of a fixture."""
    dep = deployment_mod.Deployment(
        "sqlite", workdir, extra_conf=cloud.heat_conf(user)
    )
    if user == "demo":
        cloud.register_orchestration(dep.url)
    try:
        # Stopped even when the start fails half-way.
        dep.start()
        yield dep
    finally:
        dep.stop()
