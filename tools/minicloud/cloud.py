"""Start, inspect and stop one test cloud.

``start`` goes serially, each step timed into ``layout.timings``:
configs, databases and vhost; Keystone (migrate, keys, bootstrap, serve,
catalog); Glance, Placement and Neutron (migrate, serve); Nova (cells,
migrate, API, conductor, scheduler, compute, host discovery); then the
seed (image, flavors, shared network). A failed step stops whatever had
started and drops the databases, so a failed start leaves nothing
behind. ``stop`` ends the recorded process groups and drops the
databases and the vhost.
"""

import contextlib
import os
import time

import openstack

from tools.minicloud import backing, catalog, configs, processes, seed
from tools.minicloud import layout as layout_mod

WSGI = {
    # name: (WSGI module, program name oslo.config sees)
    "keystone": ("keystone.wsgi.api", "keystone"),
    "glance": ("glance.wsgi.api", "glance-api"),
    "placement": ("placement.wsgi.api", "placement-api"),
    "neutron": ("neutron.wsgi.api", "neutron-api"),
    "nova": ("nova.wsgi.osapi_compute", "nova-api"),
}
NOVA_DAEMONS = ("nova-conductor", "nova-scheduler", "nova-compute")
NOVA_DRIVER = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "nova_driver"
)


class Cloud:
    """One cloud, described by its ``Layout``."""

    def __init__(self, layout, log=print):
        self.layout = layout
        self.log = log

    @contextlib.contextmanager
    def _step(self, name):
        started = time.monotonic()
        yield
        self.layout.timings[name] = round(time.monotonic() - started, 1)
        self.log("  %-22s %5.1f s" % (name, self.layout.timings[name]))

    def _env(self, service):
        env = {
            "OS_%s_CONFIG_DIR" % service.upper(): self.layout.path(
                "etc", service
            )
        }
        if service == "nova":
            # The first file is also the paste config nova-api loads.
            env["OS_NOVA_CONFIG_FILES"] = ";".join(
                ("api-paste.ini", "nova.conf", "nova-api.conf")
            )
        return env

    def _conf(self, service, name):
        return ["--config-file", self.layout.path("etc", service, name)]

    def _serve(self, service, path=""):
        module, prog = WSGI[service]
        processes.gunicorn(
            self.layout,
            service,
            self.layout.ports[service],
            module,
            prog,
            self._env(service),
        )
        processes.wait_http(
            self.layout, service, self.layout.url(service) + path
        )

    # Start ---------------------------------------------------------------
    def start(self):
        """Start every service; return the layout (saved in its dir)."""
        try:
            self._start()
        except BaseException:
            self.log(
                "start failed: stopping what had started (logs "
                "stay in %s)" % self.layout.path("log")
            )
            self.stop()
            raise
        return self.layout

    def _start(self):
        lay = self.layout
        with self._step("configs, dbs, vhost"):
            configs.render(lay)
            lay.save()
            backing.create_databases(lay)
            backing.create_vhost(lay)
        with self._step("keystone setup"):
            self._keystone_setup()
        with self._step("keystone ready"):
            self._serve("keystone", "/v3")
        with self._step("catalog"):
            catalog.register(lay)
            catalog.write_clouds_yaml(lay)
        self._simple_services()
        self._nova()
        with self._step("seed"):
            seed.seed(lay)
        lay.save()

    def _keystone_setup(self):
        manage = [
            self.layout.bin("keystone-manage"),
            *self._conf("keystone", "keystone.conf"),
        ]
        user = [
            "--keystone-user",
            str(os.getuid()),
            "--keystone-group",
            str(os.getgid()),
        ]
        processes.run(self.layout, "keystone-manage", manage + ["db_sync"])
        for step in ("fernet_setup", "credential_setup"):
            processes.run(
                self.layout, "keystone-manage", manage + [step, *user]
            )
        url = self.layout.auth_url
        processes.run(
            self.layout,
            "keystone-manage",
            manage
            + [
                "bootstrap",
                "--bootstrap-password",
                self.layout.password,
                "--bootstrap-admin-url",
                url,
                "--bootstrap-internal-url",
                url,
                "--bootstrap-public-url",
                url,
                "--bootstrap-region-id",
                layout_mod.REGION,
            ],
        )

    def _simple_services(self):
        lay = self.layout
        with self._step("glance"):
            processes.run(
                lay,
                "glance-manage",
                [
                    lay.bin("glance-manage"),
                    *self._conf("glance", "glance-api.conf"),
                    "db_sync",
                ],
            )
            self._serve("glance")
        with self._step("placement"):
            processes.run(
                lay,
                "placement-manage",
                [
                    lay.bin("placement-manage"),
                    *self._conf("placement", "placement.conf"),
                    "db",
                    "sync",
                ],
            )
            self._serve("placement")
        with self._step("neutron"):
            processes.run(
                lay,
                "neutron-db-manage",
                [
                    lay.bin("neutron-db-manage"),
                    *self._conf("neutron", "neutron.conf"),
                    *self._conf("neutron", "plugins/ml2/ml2_conf.ini"),
                    "upgrade",
                    "heads",
                ],
            )
            self._serve("neutron")

    def _nova_manage(self, *args):
        processes.run(
            self.layout,
            "nova-manage",
            [
                self.layout.bin("nova-manage"),
                *self._conf("nova", "nova.conf"),
                *args,
            ],
        )

    def _nova(self):
        lay = self.layout
        with self._step("nova db"):
            self._nova_manage("api_db", "sync")
            self._nova_manage(
                "cell_v2",
                "map_cell0",
                "--database_connection",
                lay.db_url("nova_cell0"),
            )
            self._nova_manage("cell_v2", "create_cell", "--name", "cell1")
            self._nova_manage("db", "sync")
        with self._step("nova-api ready"):
            self._serve("nova")
        with self._step("nova daemons, hosts"):
            for daemon in NOVA_DAEMONS:
                processes.spawn(
                    lay,
                    daemon,
                    [lay.bin(daemon), *self._conf("nova", "nova.conf")],
                    # nova-compute's virt driver (minicloud_nova) is here.
                    env={"PYTHONPATH": NOVA_DRIVER},
                )
            self._wait_compute_up()
            self._nova_manage("cell_v2", "discover_hosts")

    def _wait_compute_up(self, timeout=120):
        conn = catalog.connect(self.layout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                for daemon in NOVA_DAEMONS:
                    if not processes.alive(self.layout.pids[daemon]):
                        raise processes.StartFailed(
                            "%s exited; see %s"
                            % (daemon, self.layout.path("log"))
                        )
                if any(
                    s.binary == "nova-compute" and s.state == "up"
                    for s in conn.compute.services()
                ):
                    return
                time.sleep(0.5)
        finally:
            conn.close()
        raise processes.StartFailed(
            "nova-compute was not up within %d s" % timeout
        )

    # Stop and status -----------------------------------------------------
    def stop(self):
        """End every recorded process; drop the databases and vhost."""
        processes.stop_all(self.layout)
        for drop in (backing.drop_databases, backing.drop_vhost):
            try:
                drop(self.layout)
            except Exception as exc:  # keep going: stop as much as we can
                self.log("could not %s: %s" % (drop.__name__, exc))
        self.layout.save()

    def status(self):
        """{process name: "running" | "dead"} and whether Keystone
        answers a token request."""
        procs = {
            name: "running" if processes.alive(pid) else "dead"
            for name, pid in sorted(self.layout.pids.items())
        }
        try:
            conn = catalog.connect(self.layout)
            conn.authorize()
            conn.close()
            api = "ok"
        except openstack.exceptions.SDKException as exc:
            api = "failing: %s" % exc
        return {"processes": procs, "keystone": api}
