"""OpenStack Heat 27 instead of heat_lite: ``run --service heat``.

The same suite on the same cloud against the service heat_lite replaces,
for issue 28's comparison (a manual run, not CI). Heat comes from the
benchmarks' cached venv (``bench.heat_venv``, pinned by
``bench/heat-constraints.txt``) and runs as ``bench.heat_service.
KeystoneHeat``: heat-api, heat-api-cfn and heat-engine (convergence, 2
workers) in keystone mode against the cloud's Keystone, with the
cloud's ``heat`` service user validating tokens and acting as the
trustee, and a stack user domain made here (``stack_domain``), as
``heat-manage``'s ``heat_stack_domain`` set-up does.

Its database and vhost (``harness.backends``) and its PIDs are recorded
in ``<dir>/heat.json`` in the format of ``tools.minicloud.heat_lite``'s
state as soon as each exists, so ``tools.tempest``'s one stop path
(``heat_lite.Heat.load(dir).stop()``: signal the recorded process
groups, drop the database and the vhost) stops either service, also
after a ``kill -9`` of the run.
"""

import json
import os

from bench import heat_service, heat_venv
from tools.minicloud import catalog

STACK_DOMAIN = "heat"
DOMAIN_ADMIN = "heat_domain_admin"


def stack_domain(layout, domain=STACK_DOMAIN, admin=DOMAIN_ADMIN):
    """The domain Heat makes its stack users in and that domain's
    admin user (password: the cloud's), with the ``admin`` role on the
    domain; kept if they exist already (a ``--cloud`` reused)."""
    conn = catalog.connect(layout)
    try:
        ident = conn.identity
        dom = ident.find_domain(domain) or ident.create_domain(
            name=domain, description="Heat stack users"
        )
        user = ident.find_user(admin, domain_id=dom.id) or ident.create_user(
            name=admin, password=layout.password, domain_id=dom.id
        )
        ident.assign_domain_role_to_user(dom, user, ident.find_role("admin"))
    finally:
        conn.close()


def state(pids, database="", vhost="", port=0):
    """``heat.json``'s contents (``tools.minicloud.heat_lite.Heat``'s
    format) for a Heat with these ``pids`` ({key: pid}), database name
    and vhost name."""
    return {
        "name": "heat",
        "database": database,
        "vhost": vhost,
        "port": port,
        "pids": dict(pids),
    }


def _name(url):
    """The database or vhost name at the end of a URL."""
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[1]


class Recorded(heat_service.KeystoneHeat):
    """KeystoneHeat that keeps ``<workdir>/heat.json`` up to date."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.state = state({}, port=self.port)

    @property
    def state_file(self):
        return os.path.join(self.workdir, "heat.json")

    def _save(self):
        os.makedirs(self.workdir, exist_ok=True)
        with open(self.state_file + ".tmp", "w") as f:
            json.dump(self.state, f, indent=2, sort_keys=True)
        os.replace(self.state_file + ".tmp", self.state_file)

    def backend_made(self, kind, url):
        self.state[kind] = _name(url)
        self._save()

    def spawn(self, key, argv, env=None):
        super().spawn(key, argv, env=env)
        self.state["pids"][key] = self.procs[key].pid
        self._save()


def start(directory, layout, log=print):
    """Start Heat under ``directory`` against ``layout``'s cloud; return
    it (its ``url`` is the API root to register as ``orchestration``)."""
    bin_dir = heat_venv.ensure(echo=log)
    log("Heat %s from %s" % (heat_venv.installed_version(bin_dir), bin_dir))
    stack_domain(layout)
    return Recorded(
        bin_dir,
        directory,
        auth_url=layout.auth_url,
        password=layout.password,
        stack_domain=STACK_DOMAIN,
        domain_admin=DOMAIN_ADMIN,
    ).start()
