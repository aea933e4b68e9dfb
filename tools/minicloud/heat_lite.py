"""heat_lite in keystone mode against the test cloud (tempest's, and
``python -m tools.minicloud heat-lite start|stop`` for people).

``heat-lite-api`` behind keystonemiddleware plus ``heat-lite-engine``,
from the venv running this tool, as operators run it with Heat's
``deferred_auth_method = trusts``: the cloud's ``heat`` service user
validates tokens and is the trustee of every stack's trust. It gets a
PostgreSQL database and a RabbitMQ vhost of its own. Everything needed
to stop it (PIDs, database, vhost) is recorded in ``<dir>/heat.json``
before anything is started, so ``stop`` works after a crash too.
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

import requests
import sqlalchemy as sa

from tools.minicloud import backing, processes

PG_URL = os.environ.get(
    "HEAT_LITE_TEST_PG", "postgresql+psycopg2://postgres@127.0.0.1:5432"
)
ENGINE_WORKERS = 2
START_TIMEOUT = 180

CONFIG = """\
[DEFAULT]
debug = true
transport_url = {transport}
control_exchange = heat_lite_{name}
auth_encryption_key = {key}
max_stacks_per_tenant = 10000

[database]
connection = {db}

[engine]
topic = heat_lite-engine-{name}
worker_topic = heat_lite-worker-{name}
graceful_shutdown_timeout = 5
{ledger}{keystone}"""


KEYSTONE = """
[api]
auth_strategy = keystone
{api}
"""
# keystonemiddleware's section and the trustee's: the same text for
# heat_lite and for OpenStack Heat in keystone mode (``keystone_sections``).
AUTHTOKEN = """
[keystone_authtoken]
www_authenticate_uri = {auth_url}
auth_url = {auth_url}
auth_type = password
username = {username}
password = {password}
project_name = {project}
user_domain_id = default
project_domain_id = default
"""
TRUSTEE = """
[trustee]
auth_type = password
auth_url = {auth_url}
username = {username}
password = {password}
user_domain_id = default
"""


def keystone_conf(
    auth_url,
    password,
    *,
    username="heat",
    project="service",
    region="RegionOne",
    trusts=True,
    api="",
):
    """The heat_lite.conf sections of keystone mode (pure: no I/O):
    keystonemiddleware validating tokens as ``username`` of ``project``
    and, with ``trusts``, the same user as the trustee of every stack's
    trust (Heat's ``deferred_auth_method = trusts``); with ``region``,
    the region of the cloud heat_lite acts in; ``api``, more lines of
    its ``[api]`` section (one section each: the file stays readable by
    any INI parser). Everything that
    runs heat_lite in keystone mode (this tool, the benchmarks, the
    tests) takes its sections from here."""
    conf = KEYSTONE.format(api=api) + keystone_sections(
        auth_url, password, username=username, project=project, trusts=trusts
    )
    if region:
        conf += "\n[openstack]\nregion_name = %s\n" % region
    return conf


def keystone_sections(
    auth_url, password, *, username="heat", project="service", trusts=True
):
    """``[keystone_authtoken]`` validating tokens as ``username`` of
    ``project`` and, with ``trusts``, ``[trustee]``: that user as the
    trustee of every stack's trust (pure: no I/O). Heat reads the same
    two sections (``bench.heat_service.KeystoneHeat``)."""
    values = {
        "auth_url": auth_url,
        "password": password,
        "username": username,
        "project": project,
    }
    conf = AUTHTOKEN.format(**values)
    if trusts:
        conf += TRUSTEE.format(**values)
    return conf


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def render_config(
    *, name, port, db, transport, auth_url, password, region, key, ledger=None
):
    """heat_lite.conf for keystone mode (pure: no I/O). ``ledger``: the
    TestResource ledger, so a test can hold a resource's action
    (``harness.helpers.holding``)."""
    return CONFIG.format(
        ledger="test_resource_ledger = %s\n" % ledger if ledger else "",
        name=name,
        port=port,
        db=db,
        transport=transport,
        key=key,
        keystone=keystone_conf(
            auth_url,
            password,
            region=region,
            api="bind_host = 127.0.0.1\nbind_port = %d" % port,
        ),
    )


def _bin(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else name


def _rabbitmqctl(*args, check=True):
    ctl = shutil.which("rabbitmqctl")
    if ctl is None:
        raise RuntimeError("rabbitmqctl is not installed")
    return subprocess.run(
        [ctl, *args], check=check, capture_output=True, timeout=60
    )


def _pg(statement):
    engine = sa.create_engine(
        PG_URL + "/postgres", isolation_level="AUTOCOMMIT"
    )
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(statement))
    finally:
        engine.dispose()


class Heat:
    """One heat_lite under ``directory`` (its config, logs, state)."""

    def __init__(self, directory, state=None):
        self.dir = os.path.abspath(directory)
        self.state = state or {}

    @property
    def state_file(self):
        return os.path.join(self.dir, "heat.json")

    @property
    def config(self):
        return os.path.join(self.dir, "heat_lite.conf")

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.state["port"]

    @property
    def ledger(self):
        """OS::Heat::TestResource's ledger (and hold files' place)."""
        return os.path.join(self.dir, "ledger")

    @classmethod
    def load(cls, directory):
        """:raises FileNotFoundError: if none was started there."""
        heat = cls(directory)
        with open(heat.state_file) as f:
            heat.state = json.load(f)
        return heat

    def save(self):
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f, indent=2, sort_keys=True)
        os.replace(tmp, self.state_file)

    # Life cycle ----------------------------------------------------------
    def start(self, layout):
        """Start against the cloud of ``layout`` (a minicloud Layout)."""
        os.makedirs(self.dir, exist_ok=True)
        name = "tempest_%s" % uuid.uuid4().hex[:8]
        user = layout.rabbit.split("@", 1)[0].split(":", 1)[0]
        self.state = {
            "name": name,
            "database": "heat_lite_%s" % name,
            "vhost": "heat_lite_%s" % name,
            "port": free_port(),
            "pids": {},
        }
        self.save()
        _pg("CREATE DATABASE %s" % self.state["database"])
        _rabbitmqctl("add_vhost", self.state["vhost"])
        _rabbitmqctl(
            "set_permissions",
            "-p",
            self.state["vhost"],
            user,
            ".*",
            ".*",
            ".*",
        )
        self._transport = "rabbit://%s/%s" % (
            layout.rabbit,
            self.state["vhost"],
        )
        with open(self.config, "w") as f:
            f.write(
                render_config(
                    name=name,
                    port=self.state["port"],
                    db="%s/%s" % (PG_URL, self.state["database"]),
                    transport=self._transport,
                    auth_url=layout.auth_url,
                    password=layout.password,
                    region="RegionOne",
                    key=secrets.token_hex(16),
                    ledger=self.ledger,
                )
            )
        self.manage("db", "sync")
        self._spawn(
            "engine", "heat-lite-engine", "--workers", "%d" % ENGINE_WORKERS
        )
        self._spawn("api", "heat-lite-api")
        self._wait()
        return self

    def _spawn(self, key, binary, *args):
        with open(os.path.join(self.dir, "%s.log" % key), "ab") as log:
            proc = subprocess.Popen(
                [_bin(binary), "--config-file", self.config, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, XDG_DATA_HOME=self.dir),
                start_new_session=True,
            )
        self.state["pids"][key] = proc.pid
        self.save()
        self._procs = getattr(self, "_procs", {})
        self._procs[key] = proc

    def _wait(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for key, proc in self._procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(
                        "heat-lite %s exited; see %s/%s.log"
                        % (key, self.dir, key)
                    )
            try:
                requests.get(self.url, timeout=2)
                if self._engines_up() >= ENGINE_WORKERS:
                    return
            except (requests.ConnectionError, requests.Timeout):
                pass
            time.sleep(0.5)
        raise RuntimeError("heat_lite did not start; logs in %s" % self.dir)

    def _engines_up(self):
        """Engines registered (``service list`` says up) and consuming
        both topics (a call to a topic no engine consumes yet is lost)."""
        out = self.manage("service", "list")
        up = sum(1 for line in out.splitlines()[1:] if " up " in line)
        name = self.state["name"]
        for topic in ("heat_lite-engine-", "heat_lite-worker-"):
            up = min(
                up, backing.queue_consumers(self._transport, topic + name)
            )
        return up

    def manage(self, *args):
        result = subprocess.run(
            [_bin("heat-lite-manage"), "--config-file", self.config, *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, XDG_DATA_HOME=self.dir),
        )
        if result.returncode != 0:
            raise RuntimeError(
                "heat-lite-manage %s failed: %s%s"
                % (" ".join(args), result.stdout, result.stderr)
            )
        return result.stdout

    def stop(self):
        """Stop the recorded processes, drop the database and vhost."""
        pids = self.state.get("pids", {})
        for pid in pids.values():
            processes.signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(
            map(processes.alive, pids.values())
        ):
            time.sleep(0.2)
        for pid in pids.values():
            if processes.alive(pid):
                processes.signal_group(pid, signal.SIGKILL)
        for proc in getattr(self, "_procs", {}).values():
            proc.wait()
        if self.state.get("database"):
            _pg(
                "DROP DATABASE IF EXISTS %s WITH (FORCE)"
                % self.state["database"]
            )
        if self.state.get("vhost"):
            _rabbitmqctl("delete_vhost", self.state["vhost"], check=False)
        self.state = {}
        if os.path.exists(self.state_file):
            os.remove(self.state_file)
