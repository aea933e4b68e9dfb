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

START_TIMEOUT = 180
API_THREADS = 8
API_MODULE = """\
import sys

sys.argv = ["heat-api", "--config-file", {config!r}]
from heat.api.openstack.wsgi import init_application  # noqa: E402

application = init_application()
"""

HEAT_CONF = """\
[DEFAULT]
transport_url = {transport}
control_exchange = heat_bench_{suffix}
convergence_engine = true
num_engine_workers = {workers}
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


class Heat(process_group.ProcessGroup):
    """A standalone Heat under ``workdir``, from the venv ``bin_dir``."""

    STOP_TIMEOUT = 20

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
        transport, drop_vhost = backends.create_vhost()
        self.add_cleanup(drop_vhost)
        venv = os.path.dirname(self.bin_dir)
        with open(self.config, "w") as f:
            f.write(
                HEAT_CONF.format(
                    transport=transport,
                    suffix=uuid.uuid4().hex[:8],
                    workers=self.workers,
                    db=db_url,
                    paste=os.path.join(venv, "etc", "heat", "api-paste.ini"),
                )
            )
        self.manage("db_sync")
        self._spawn("engine", "heat-engine", "--config-file", self.config)
        self._spawn("api", *self._api_command())
        self._write_pids()
        self._wait_ready()
        return self

    def _api_command(self):
        """gunicorn serving Heat's WSGI application (what devstack runs
        under uwsgi): one process, ``API_THREADS`` threads. The app module
        gives oslo.config the config file, as heat-wsgi-api would."""
        module = os.path.join(self.workdir, "heat_bench_api.py")
        with open(module, "w") as f:
            f.write(API_MODULE.format(config=self.config))
        return (
            "gunicorn",
            "--chdir",
            self.workdir,
            "--bind",
            "127.0.0.1:%d" % self.port,
            "--workers",
            "1",
            "--threads",
            str(API_THREADS),
            "--timeout",
            "3600",
            "heat_bench_api:application",
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
