"""A real Keystone for the functional tests: SQLite, fernet tokens,
``keystone-manage bootstrap``, served by cheroot on a free loopback port;
and a heat_lite deployment that authenticates against it.

The ``keystone`` package is in the ``test`` extra. When it is missing the
tests skip (fail under CI=true, like any other backing service).
"""

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys

import requests

from harness import backends, polling
from harness import deployment as deployment_mod
from tools import cached_venv
from tools.minicloud import heat_lite as heat_lite_mod

PASSWORD = "keystone-test-secret"
# Keystone parses sys.argv as its own options: the port comes by env.
_SERVER = """
import os
from cheroot import wsgi
from keystone.wsgi.api import application
wsgi.Server(("127.0.0.1", int(os.environ["KEYSTONE_TEST_PORT"])),
            application, numthreads=8).safe_start()
"""
_CONF = """
[database]
connection = sqlite:///{dir}/keystone.sqlite
[fernet_tokens]
key_repository = {dir}/fernet-keys
[fernet_receipts]
key_repository = {dir}/fernet-keys
[credential]
key_repository = {dir}/credential-keys
[token]
provider = fernet
"""
# OS::Heat::Stack reaches this same heat_lite (through keystonemiddleware)
# with no [remote_stack] credentials: it can only act with the token of
# the user who started the operation, kept under auth_encryption_key.
REMOTE_STACK_CONF = """
[DEFAULT]
auth_encryption_key = {key}
[remote_stack]
endpoint_override = {url}/v1/%(project_id)s
poll_interval = 0.2
[apps]
allowed_sources = file:///srv/git/*
"""
ENCRYPTION_KEY = "functional-tests-encryption-key-0123456789"


def deployment(keystone, kind, workdir):
    """A heat_lite of ``kind`` (not started) authenticating against
    ``keystone``, whose OS::Heat::Stack creates stacks in itself."""
    dep = deployment_mod.Deployment(kind, workdir)
    dep.extra_conf = heat_lite_mod.keystone_conf(
        keystone.url + "/v3",
        PASSWORD,
        username="admin",
        project="admin",
        region=None,
        trusts=False,
    ) + REMOTE_STACK_CONF.format(key=ENCRYPTION_KEY, url=dep.url)
    return dep


def available():
    """Skip (or fail under CI) when the keystone package is missing."""
    try:
        import keystone  # noqa: F401
    except ImportError:
        backends.unavailable(
            "Keystone",
            "the keystone package is not installed (pip install -e .[test])",
        )


class Keystone:
    """keystone-manage set-up and a cheroot process serving it."""

    def __init__(self, workdir):
        self.dir = str(workdir)
        self.port = deployment_mod.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.config = os.path.join(self.dir, "keystone.conf")
        self.proc = None

    def _manage(self, *args, config=None):
        subprocess.run(
            [
                deployment_mod.command("keystone-manage"),
                "--config-file",
                config or self.config,
                *args,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def _prepare(self, where, user):
        """Keystone's migrated database and its fernet and credential
        keys made in ``where``: what a start copies, made once per
        keystone version (three keystone-manage runs, ~7 CPU-s and
        20-30 s under load, that every start used to pay)."""
        config = os.path.join(where, "keystone.conf")
        with open(config, "w") as f:
            f.write(_CONF.format(dir=where))
        for sub in ("fernet-keys", "credential-keys"):
            os.makedirs(os.path.join(where, sub))
        for args in (
            ["db_sync"],
            ["fernet_setup", *user],
            ["credential_setup", *user],
        ):
            self._manage(*args, config=config)

    def start(self):
        for sub in ("fernet-keys", "credential-keys"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        with open(self.config, "w") as f:
            f.write(_CONF.format(dir=self.dir))
        user = [
            "--keystone-user",
            str(os.getuid()),
            "--keystone-group",
            str(os.getgid()),
        ]
        prepared = cached_venv.once(
            os.path.join(
                cached_venv.CACHE,
                "keystone-%s-%s"
                % (
                    importlib.metadata.version("keystone"),
                    hashlib.sha256(_CONF.encode()).hexdigest()[:12],
                ),
            ),
            lambda where: self._prepare(where, user),
        )
        shutil.copyfile(
            os.path.join(prepared, "keystone.sqlite"),
            os.path.join(self.dir, "keystone.sqlite"),
        )
        for sub in ("fernet-keys", "credential-keys"):
            shutil.copytree(
                os.path.join(prepared, sub),
                os.path.join(self.dir, sub),
                dirs_exist_ok=True,
            )
        self._manage(
            "bootstrap",
            "--bootstrap-password",
            PASSWORD,
            "--bootstrap-admin-url",
            self.url + "/v3",
            "--bootstrap-public-url",
            self.url + "/v3",
            "--bootstrap-internal-url",
            self.url + "/v3",
            "--bootstrap-region-id",
            "RegionOne",
        )
        log = open(os.path.join(self.dir, "keystone.log"), "ab")
        env = dict(
            os.environ,
            OS_KEYSTONE_CONFIG_FILES=self.config,
            KEYSTONE_TEST_PORT=str(self.port),
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("keystone exited")
            try:
                return requests.get(self.url + "/v3", timeout=2).ok
            except requests.ConnectionError:
                return False

        polling.until(up, 90, "keystone to start", 0.3, RuntimeError)
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def session(self, user="admin", project="admin", password=PASSWORD):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        return session.Session(
            auth=v3.Password(
                auth_url=self.url + "/v3",
                username=user,
                password=password,
                project_name=project,
                user_domain_id="default",
                project_domain_id="default",
            )
        )

    def admin(self):
        from keystoneclient.v3 import client

        return client.Client(session=self.session())

    def add_user(self, name, project, role):
        """Create ``project`` if needed and ``name`` with ``role`` on it;
        return the project id."""
        ks = self.admin()
        found = ks.projects.list(name=project)
        proj = found[0] if found else ks.projects.create(project, "default")
        user = ks.users.create(name, domain="default", password=PASSWORD)
        role_id = ks.roles.list(name=role)[0]
        ks.roles.grant(role_id, user=user, project=proj)
        return proj.id

    def register_heat(self, heat_url):
        """The orchestration service and its endpoint in the catalog."""
        ks = self.admin()
        service = ks.services.create("heat", type="orchestration")
        for interface in ("public", "internal", "admin"):
            ks.endpoints.create(
                service,
                heat_url + "/v1/%(tenant_id)s",
                interface=interface,
                region="RegionOne",
            )
