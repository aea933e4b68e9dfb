"""OpenStack Heat run standalone for the comparison: no Keystone,
convergence, two engine workers, on the machine's PostgreSQL and
RabbitMQ.

Heat gets its own private database and RabbitMQ vhost, made per run by
``harness.backends`` (as heat_lite's do) and dropped at the end. How it runs
without Keystone:

* ``[paste_deploy] flavor = noauth``: heat-api's pipeline without
  keystonemiddleware; the user comes from ``X-Auth-User``, the project
  from ``X-Auth-Project``, and every request is an admin one;
* ``[DEFAULT] deferred_auth_method = password``: with the default
  ``trusts`` every stack store asks Keystone for a trust; with
  ``password`` Heat only stores the request's credentials (and asks for
  them only for resources that need deferred auth, which
  ``OS::Heat::None`` and ``OS::Heat::TestResource`` do not).

heat-engine and heat-api are started in sessions of their own, their
PIDs written to ``<workdir>/pids``, and stopped by those PIDs (process
groups) at the end, even when the run failed.
"""

import os
import subprocess
import time
import uuid

import requests

from harness import backends, process_group
from harness.deployment import free_port
from harness.procs import children
from tools.minicloud import heat_lite as heat_lite_mod

START_TIMEOUT = 180
API_THREADS = 8
API_MODULE = """\
import sys

sys.argv = [{prog!r}, "--config-file", {config!r}]
from heat.api.{package}.wsgi import init_application  # noqa: E402

application = init_application()
"""
# (prog, package of its wsgi module) of heat-api and heat-api-cfn.
API_APPS = {"api": ("heat-api", "openstack"), "cfn": ("heat-api-cfn", "cfn")}

# The head of [DEFAULT] that every Heat of this module has.
DEFAULT_HEAD = """\
[DEFAULT]
transport_url = {transport}
control_exchange = heat_bench_{suffix}
convergence_engine = true
num_engine_workers = {workers}
"""
HEAT_CONF = (
    DEFAULT_HEAD
    + """\
deferred_auth_method = password
max_resources_per_stack = -1
max_stacks_per_tenant = 10000
max_template_size = 16777216
max_json_body_size = 33554432
periodic_interval = 60
rpc_response_timeout = 3600
debug = false

[database]
connection = {db}
max_pool_size = 10
max_overflow = 20

[paste_deploy]
flavor = noauth
api_paste_config = {paste}

[oslo_messaging_notifications]
driver = noop

[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
"""
)


class Heat(process_group.ProcessGroup):
    """A standalone Heat under ``workdir``, from the venv ``bin_dir``."""

    STOP_TIMEOUT = 20
    # Seconds gunicorn keeps an idle connection open (its default).
    KEEP_ALIVE = 2

    def __init__(self, bin_dir, workdir, workers=2):
        super().__init__(workdir, log_prefix="heat-")
        self.bin_dir = bin_dir
        self.workers = workers
        self.port = free_port()
        self.config = os.path.join(workdir, "heat.conf")

    def start(self):
        os.makedirs(self.workdir, exist_ok=True)
        db_url, drop = backends.create_database("postgresql")
        self.add_cleanup(drop)
        self.backend_made("database", db_url)
        transport, drop_vhost = backends.create_vhost()
        self.add_cleanup(drop_vhost)
        self.backend_made("vhost", transport)
        with open(self.config, "w") as f:
            f.write(self.render_config(db_url, transport))
        self.manage("db_sync")
        for key, argv in self.services():
            self._spawn(key, *argv)
        self._write_pids()
        self._wait_ready()
        return self

    def services(self):
        """[(key, argv)] of the processes to start, in order."""
        return [
            ("engine", ("heat-engine", "--config-file", self.config)),
            ("api", self._api_command()),
        ]

    @property
    def paste_config(self):
        venv = os.path.dirname(self.bin_dir)
        return os.path.join(venv, "etc", "heat", "api-paste.ini")

    def render_config(self, db_url, transport):
        """heat.conf's text (pure)."""
        return HEAT_CONF.format(
            transport=transport,
            suffix=uuid.uuid4().hex[:8],
            workers=self.workers,
            db=db_url,
            paste=self.paste_config,
        )

    def backend_made(self, kind, url):
        """Called as soon as the ``database`` or ``vhost`` at ``url``
        exists (before any process starts): a subclass records it where
        a later clean-up can find it after a crash."""

    def _api_command(self, name="api", port=None):
        """gunicorn serving Heat's WSGI application ``name`` (``api``,
        ``cfn``: one of API_APPS; what devstack runs under uwsgi): one
        process, ``API_THREADS`` threads. The app module gives oslo.config
        the config file, as heat-wsgi-api would."""
        module = "heat_bench_%s" % name
        prog, package = API_APPS[name]
        with open(os.path.join(self.workdir, module + ".py"), "w") as f:
            f.write(
                API_MODULE.format(
                    prog=prog, package=package, config=self.config
                )
            )
        return (
            "gunicorn",
            "--chdir",
            self.workdir,
            "--bind",
            "127.0.0.1:%d" % (port or self.port),
            "--workers",
            "1",
            "--threads",
            str(API_THREADS),
            "--timeout",
            "3600",
            "--keep-alive",
            str(self.KEEP_ALIVE),
            "%s:application" % module,
        )

    def _spawn(self, key, binary, *args):
        self.spawn(key, [os.path.join(self.bin_dir, binary), *args])

    def _write_pids(self):
        with open(os.path.join(self.workdir, "pids"), "w") as f:
            for key, proc in self.procs.items():
                f.write("%s %d\n" % (key, proc.pid))

    def _wait_ready(self):
        """Until the API answers and every engine worker has registered
        (``heat-manage service list`` says ``up``)."""
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            for key, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(
                        "heat-%s exited:\n%s" % (key, self.log(key))
                    )
            try:
                requests.get(self.url, timeout=5)
                if self.engines_up() >= self.workers:
                    return
            except requests.RequestException:
                # Not listening yet, or still loading the application.
                pass
            time.sleep(0.5)
        raise RuntimeError(
            "Heat did not start:\n%s" % "\n".join(map(self.log, self.procs))
        )

    def engines_up(self):
        out = self.manage("service", "list")
        return sum(1 for line in out.splitlines() if " up " in line)

    def manage(self, *args):
        result = subprocess.run(
            [
                os.path.join(self.bin_dir, "heat-manage"),
                "--config-file",
                self.config,
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(
                "heat-manage %s failed: %s%s"
                % (" ".join(args), result.stdout, result.stderr[-3000:])
            )
        return result.stdout

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def endpoint(self, project="demo"):
        return "%s/v1/%s" % (self.url, project)

    def engine_pids(self):
        """The engine supervisor and its worker processes."""
        return [self.procs["engine"].pid] + _children(self.procs["engine"].pid)

    def api_pids(self):
        return [self.procs["api"].pid] + _children(self.procs["api"].pid)


def _children(parent):
    return children(parent)


KEYSTONE_CONF = (
    DEFAULT_HEAD
    + """\
deferred_auth_method = trusts
auth_encryption_key = {key}
region_name_for_services = {region}
stack_user_domain_name = {stack_domain}
stack_domain_admin = {domain_admin}
stack_domain_admin_password = {password}
heat_metadata_server_url = {cfn_url}
heat_waitcondition_server_url = {cfn_url}/v1/waitcondition
max_stacks_per_tenant = 10000
rpc_response_timeout = 600
debug = true

[database]
connection = {db}

[paste_deploy]
api_paste_config = {paste}

[clients]
endpoint_type = public

[clients_keystone]
auth_uri = {keystone_url}

[ec2authtoken]
# heat-api-cfn checks EC2 signatures at <endpoint_override>/v3/ec2tokens
# (the catalog's identity endpoint carries /v3), as the heat user.
endpoint_override = {keystone_url}
auth_type = password
auth_url = {auth_url}
username = heat
password = {password}
project_name = service
user_domain_id = default
project_domain_id = default

[oslo_messaging_notifications]
driver = noop

[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
{keystone}"""
)


class KeystoneHeat(Heat):
    """Heat 27 as a cloud runs it: heat-api (with keystonemiddleware),
    heat-api-cfn and heat-engine (convergence) against the cloud's
    Keystone at ``auth_url``, with Heat's ``deferred_auth_method =
    trusts``: the ``heat`` service user of the ``service`` project
    validates tokens and is every stack's trustee; stack users live in
    the ``stack_domain`` domain, administered by ``domain_admin`` (made
    beforehand: ``tools.tempest.heat.stack_domain``); every password is
    ``password``. The OpenStack clients of the engine use the catalog's
    ``public`` endpoints of ``region``."""

    # Longer than a client's pause between two requests: tempest polls
    # every 2 s on a kept-alive connection, and with gunicorn's 2 s the
    # server closed it as the next poll was sent (RemoteDisconnected).
    KEEP_ALIVE = 75

    def __init__(
        self,
        bin_dir,
        workdir,
        *,
        auth_url,
        password,
        region="RegionOne",
        stack_domain="heat",
        domain_admin="heat_domain_admin",
        workers=2,
    ):
        super().__init__(bin_dir, workdir, workers=workers)
        self.auth_url = auth_url
        self.password = password
        self.region = region
        self.stack_domain = stack_domain
        self.domain_admin = domain_admin
        self.cfn_port = free_port()

    @property
    def cfn_url(self):
        return "http://127.0.0.1:%d" % self.cfn_port

    def render_config(self, db_url, transport):
        return KEYSTONE_CONF.format(
            transport=transport,
            suffix=uuid.uuid4().hex[:8],
            workers=self.workers,
            key=uuid.uuid4().hex,
            region=self.region,
            stack_domain=self.stack_domain,
            domain_admin=self.domain_admin,
            password=self.password,
            cfn_url=self.cfn_url,
            db=db_url,
            paste=self.paste_config,
            keystone_url=self.auth_url.rsplit("/v3", 1)[0],
            auth_url=self.auth_url,
            keystone=heat_lite_mod.keystone_sections(
                self.auth_url, self.password
            ),
        )

    def services(self):
        return super().services() + [
            ("cfn", self._api_command("cfn", self.cfn_port))
        ]
