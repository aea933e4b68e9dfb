"""Start heat_lite for real: processes, ports, config files, clients.

Two shapes, as operators run it:

* ``sqlite``: ``heat-lite-all`` alone (SQLite file, ``fake://``);
* ``postgresql`` / ``mysql``: ``heat-lite-api`` plus ``heat-lite-engine
  --workers 2`` over a private RabbitMQ vhost and a private database.
"""

import atexit
import configparser
import datetime
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid

import requests
from heatclient import client as heat_client
from keystoneauth1 import noauth, session

from harness import backends, polling, process_group
from harness.procs import children
from tools.minicloud import backing

BIN = os.path.dirname(sys.executable)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def command(name):
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else name


def running(kind, workdir, **kwargs):
    """Yield a started Deployment and stop it afterwards: the body of a
    fixture (``yield from running(...)``)."""
    dep = Deployment(kind, workdir, **kwargs).start()
    try:
        yield dep
    finally:
        dep.stop()


class Deployment(process_group.ProcessGroup):
    """A running heat_lite of one ``kind`` under ``workdir``."""

    def __init__(
        self,
        kind,
        workdir,
        engine_workers=2,
        extra_conf="",
        db_owner=None,
        env=None,
    ):
        """:param db_owner: PostgreSQL: the role that owns the private
        database and that every process connects as (default: the
        superuser of ``backends.PG_URL``).
        :param env: extra environment of its processes."""
        super().__init__(workdir)
        self.kind = kind
        self.db_owner = db_owner
        self.engine_workers = engine_workers
        self.extra_conf = extra_conf
        self.extra_env = dict(env or {})
        self.port = free_port()
        self.ledger = os.path.join(self.workdir, "ledger")
        self.config = os.path.join(self.workdir, "heat_lite.conf")
        self.db_url = None
        self.transport = None

    # Life cycle ----------------------------------------------------------
    def start(self):
        if self.kind == "sqlite":
            db_url = "sqlite:///%s/heat_lite.sqlite" % self.workdir
            transport = "fake://"
            _copy_template(self.kind, self.env(), db_url)
        else:
            db_url, drop = _database(self.kind, self.env(), self.db_owner)
            self.add_cleanup(drop)
            transport, drop_vhost = backends.create_vhost()
            self.add_cleanup(drop_vhost)
        self.db_url = db_url
        self.transport = transport
        suffix = uuid.uuid4().hex[:8]
        with open(self.config, "w") as f:
            f.write(
                _CONFIG.format(
                    transport=transport,
                    db=db_url,
                    port=self.port,
                    suffix=suffix,
                    ledger=self.ledger,
                )
                + self.extra_conf
            )
        if db_url not in _MIGRATED:
            self.manage("db", "sync")
        if self.kind == "sqlite":
            self._spawn("all", "heat-lite-all")
        else:
            self._spawn(
                "engine",
                "heat-lite-engine",
                "--workers",
                str(self.engine_workers),
            )
            self._spawn("api", "heat-lite-api")
        self._wait_for_api()
        return self

    def _spawn(self, key, binary, *args, prefix=()):
        """Start heat_lite's ``binary`` with this deployment's config
        (``prefix``: a command it runs under, ``ip netns exec ...``)."""
        self.spawn(
            key,
            [*prefix, command(binary), "--config-file", self.config, *args],
            env=self.env(),
        )

    def env(self):
        """The environment of every process of this deployment."""
        return dict(os.environ, XDG_DATA_HOME=self.workdir, **self.extra_env)

    # Deadlines, not waits: a start returns as soon as it is up, and a
    # process that exits is noticed at once; they only have to outlast a
    # start on two cores shared by parallel test workers (and whatever
    # else runs there), which can take minutes.
    START_TIMEOUT = 180
    MANAGE_TIMEOUT = 300

    def _wait_for_api(self, timeout=None):
        def up():
            for key, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError("%s exited:\n%s" % (key, self.log(key)))
            try:
                requests.get(self.url, timeout=1)
            except (requests.ConnectionError, requests.Timeout):
                # A busy machine: the API accepted but has not answered.
                return False
            return (
                self.kind == "sqlite"
                or self.engines_up() >= self.engine_workers
            )

        polling.until(
            up,
            timeout or self.START_TIMEOUT,
            lambda: (
                "API to start:\n%s"
                % "\n".join(self.log(k) for k in self.procs)
            ),
            interval=0.2,
            error=RuntimeError,
        )

    def engines_up(self):
        """How many engines ``heat-lite-manage service list`` shows up:
        its query and its rule (a heartbeat no older than ``[engine]
        engine_life_check_timeout``), read here instead of by a process
        whose start costs a CPU-second, which a start's wait used to
        pay on every poll."""
        import sqlalchemy as sa

        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.read(self.config)
        limit = parser.getfloat(
            "engine", "engine_life_check_timeout", fallback=20.0
        )
        # NullPool: no connection stays open between polls (a test may
        # count a role's connections, or restart the server).
        engine = sa.create_engine(self.db_url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                beats = conn.exec_driver_sql(
                    "SELECT updated_at FROM service WHERE deleted_at IS NULL"
                ).scalars()
                now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
                up = sum(1 for beat in beats if _age(now, beat) <= limit)
        finally:
            engine.dispose()
        if (self.transport or "").startswith("rabbit://"):
            # Registered is not yet consuming: count only what every
            # engine topic's queue shows as consumers too.
            topics = dict(parser.items("engine"))
            for topic in (topics["topic"], topics["worker_topic"]):
                up = min(up, backing.queue_consumers(self.transport, topic))
        return up

    # Helpers -------------------------------------------------------------
    def manage(self, *args):
        return _manage(self.config, self.env(), *args)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def endpoint(self, project="demo"):
        return "%s/v1/%s" % (self.url, project)

    def client(self, project="demo", user="tester"):
        """A python-heatclient Client, as ``openstack stack`` makes it."""
        sess = session.Session(
            auth=noauth.NoAuth(), additional_headers={"X-Auth-User": user}
        )
        return heat_client.Client(
            "1", session=sess, endpoint_override=self.endpoint(project)
        )

    def engine_pids(self):
        """PIDs of the engine worker processes (children of the engine
        supervisor)."""
        parent = self.procs["engine"].pid
        return children(parent)


def _manage(config, env, *args):
    """``heat-lite-manage --config-file config *args``; its output."""
    result = subprocess.run(
        [command("heat-lite-manage"), "--config-file", config, *args],
        capture_output=True,
        text=True,
        timeout=Deployment.MANAGE_TIMEOUT,
        env=env,
    )
    if result.returncode != 0:
        raise RuntimeError(
            "heat-lite-manage %s failed: %s%s"
            % (" ".join(args), result.stdout, result.stderr)
        )
    return result.stdout


# A deployment's database starts as a copy of one that ``heat-lite-manage
# db sync`` migrated, once per test process and kind, instead of a
# migration of its own (a Python process and every migration, ~1 CPU-s):
# a SQLite file copied, a PostgreSQL database made with TEMPLATE. MariaDB
# has no template, and a database owned by a role of its own (``db_owner``:
# a copy's tables would still be the superuser's) is migrated as before.
_TEMPLATES = {}  # {kind: SQLite path or PostgreSQL database name}
_MIGRATED = set()  # the URLs of deployments' databases that are copies


def _template(kind, env):
    found = _TEMPLATES.get(kind)
    if found is not None:
        return found
    workdir = tempfile.mkdtemp(prefix="heat_lite-template-")
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    if kind == "sqlite":
        found = os.path.join(workdir, "heat_lite.sqlite")
        url = "sqlite:///%s" % found
    else:
        url, drop = backends.create_database(kind)
        atexit.register(drop)
        found = url.rsplit("/", 1)[1]
    config = os.path.join(workdir, "heat_lite.conf")
    with open(config, "w") as f:
        f.write("[database]\nconnection = %s\n" % url)
    _manage(config, env, "db", "sync")
    _TEMPLATES[kind] = found
    return found


def _copy_template(kind, env, url):
    """The SQLite database of ``url``: a copy of the migrated template,
    unless it exists (a deployment started again on its database)."""
    path = url[len("sqlite:///") :]
    if not os.path.exists(path):
        shutil.copyfile(_template(kind, env), path)
        _MIGRATED.add(url)
    else:
        _MIGRATED.discard(url)


def _database(kind, env, owner):
    """(url, drop) of a new private database of ``kind``, migrated when
    it is a template's copy (it is in ``_MIGRATED``)."""
    if kind != "postgresql" or owner is not None:
        return backends.create_database(kind, owner=owner)
    url, drop = backends.create_database(kind, template=_template(kind, env))
    _MIGRATED.add(url)
    return url, drop


def _age(now, beat):
    """Seconds since ``beat`` (SQLite answers a DATETIME as text)."""
    if isinstance(beat, str):
        beat = datetime.datetime.fromisoformat(beat)
    return (now - beat).total_seconds()


_CONFIG = """\
[DEFAULT]
transport_url = {transport}
control_exchange = heat_lite_{suffix}
max_stacks_per_tenant = 10000

[database]
connection = {db}
max_pool_size = 10
max_overflow = 20

[api]
bind_host = 127.0.0.1
bind_port = {port}

[engine]
topic = heat_lite-engine-{suffix}
worker_topic = heat_lite-worker-{suffix}
heartbeat_interval = 0.5
engine_life_check_timeout = 4
stall_timeout = 10
test_resource_ledger = {ledger}

[apps]
allowed_sources = file:///srv/git/*
"""
