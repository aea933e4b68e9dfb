"""Private backing services that the chaos tests may kill.

Each class starts its own server (never the machine's shared one) on a
spare port, under a temporary directory, bound to one address (the host
end of the chaos veth pair, or 127.0.0.1). The server runs as a child
process whose PID is recorded; ``stop`` / ``start`` / ``restart`` act on
that PID only, and ``destroy`` stops it and removes its files. Every start
is timed (``start_seconds``) so a slow machine shows up in the report.
"""

import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

from harness import backends, polling

# Below the kernel's ephemeral range (32768-60999 by default): a server
# that restarts must find its port free again, and an outgoing connection
# from the same address could otherwise take it meanwhile.
_PORTS = (20000, 32767)


def spare_port(host):
    """A port on ``host`` that nothing listens on, outside the ephemeral
    range."""
    for _ in range(200):
        port = random.randint(*_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no spare port on %s" % host)


def _wait(predicate, timeout, what, proc=None, log=None):
    def ready():
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(
                "%s exited (%s):\n%s" % (what, proc.returncode, _tail(log))
            )
        return predicate()

    polling.until(
        ready,
        timeout,
        lambda: "%s ready:\n%s" % (what, _tail(log)),
        interval=0.2,
        error=RuntimeError,
    )


def _tail(path):
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()[-4000:]


def _binary(name, *candidates, prefer_candidates=False):
    found = [shutil.which(name)]
    paths = (
        [*candidates, *found] if prefer_candidates else [*found, *candidates]
    )
    for path in paths:
        if path and os.path.exists(path):
            return path
    backends.unavailable(name, "not installed")
    return None


class Server:
    """A server process of ours: start, stop (by PID), restart, destroy."""

    kind = "server"

    def __init__(self, host):
        self.host = host
        self.port = spare_port(host)
        self.base = tempfile.mkdtemp(prefix="hlchaos-%s-" % self.kind)
        self.log = os.path.join(self.base, "server.log")
        self.proc = None
        self.start_seconds = []

    # What a subclass provides ---------------------------------------------
    def command(self):
        raise NotImplementedError

    def ready(self):
        raise NotImplementedError

    def popen_kwargs(self):
        return {}

    stop_signal = signal.SIGTERM
    start_timeout = 90

    # Life cycle -------------------------------------------------------------
    def start(self):
        started = time.time()
        log = open(self.log, "ab")
        self.proc = subprocess.Popen(
            self.command(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **self.popen_kwargs(),
        )
        log.close()
        _wait(self.ready, self.start_timeout, self.kind, self.proc, self.log)
        self.start_seconds.append(round(time.time() - started, 2))
        return self

    def stop(self, timeout=60):
        """Stop our server (its process group) and wait for it."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, self.stop_signal)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self._reap_group(proc.pid)

    @staticmethod
    def _reap_group(pgid):
        """Helpers the server forked into its group must be gone too, or
        they keep the port."""

        def gone():
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                return True
            return False

        polling.awhile(gone, 10)

    def restart(self, down_seconds=0.0):
        """Stop, stay down ``down_seconds``, start; returns when ready."""
        self.stop()
        if down_seconds:
            time.sleep(down_seconds)
        return self.start()

    def destroy(self):
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def _reachable(self):
        try:
            with socket.create_connection((self.host, self.port), timeout=1):
                return True
        except OSError:
            return False


class RabbitMQ(Server):
    """A private RabbitMQ node: own node name, ports, epmd, mnesia, cookie."""

    kind = "rabbitmq"

    def __init__(self, host):
        super().__init__(host)
        # The script itself, not /usr/sbin's wrapper (that one switches to
        # the rabbitmq user and the machine's settings).
        self.script = _binary(
            "rabbitmq-server",
            "/usr/lib/rabbitmq/bin/rabbitmq-server",
            prefer_candidates=True,
        )
        self.epmd_bin = _binary("epmd")
        self.dist_port = spare_port("127.0.0.1")
        self.epmd_port = spare_port("127.0.0.1")
        self.node = "hlchaos_%s@localhost" % uuid.uuid4().hex[:8]
        self.epmd = None
        conf = os.path.join(self.base, "rabbitmq.conf")
        with open(conf, "w") as f:
            # guest may connect from the veth address too; a small disk
            # must not block publishers.
            f.write(
                "loopback_users = none\n"
                "disk_free_limit.absolute = 1MB\n"
                "listeners.tcp.default = %s:%d\n" % (host, self.port)
            )
        with open(os.path.join(self.base, "enabled_plugins"), "w") as f:
            f.write("[].\n")
        open(os.path.join(self.base, "rabbitmq-env.conf"), "w").close()

    @property
    def transport_url(self):
        return "rabbit://guest:guest@%s:%d/" % (self.host, self.port)

    def _env(self):
        base = self.base
        return dict(
            os.environ,
            HOME=base,
            RABBITMQ_NODENAME=self.node,
            RABBITMQ_DIST_PORT=str(self.dist_port),
            ERL_EPMD_PORT=str(self.epmd_port),
            ERL_EPMD_ADDRESS="127.0.0.1",
            RABBITMQ_CONF_ENV_FILE=os.path.join(base, "rabbitmq-env.conf"),
            RABBITMQ_CONFIG_FILE=os.path.join(base, "rabbitmq.conf"),
            RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(
                base, "enabled_plugins"
            ),
            RABBITMQ_MNESIA_BASE=os.path.join(base, "mnesia"),
            RABBITMQ_LOG_BASE=os.path.join(base, "log"),
            RABBITMQ_PID_FILE=os.path.join(base, "rabbit.pid"),
            RABBITMQ_LOGS="-",
            ERL_FLAGS="",
        )

    def command(self):
        return [self.script]

    def popen_kwargs(self):
        return {"env": self._env()}

    def start(self):
        if self.epmd is None or self.epmd.poll() is not None:
            # Our own epmd on our own port: the node registers there, not
            # with the machine's epmd.
            self.epmd = subprocess.Popen(
                [
                    self.epmd_bin,
                    "-port",
                    str(self.epmd_port),
                    "-address",
                    "127.0.0.1",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        return super().start()

    def ready(self):
        if not self._reachable():
            return False
        import amqp

        conn = amqp.Connection(
            "%s:%d" % (self.host, self.port),
            userid="guest",
            password="guest",
            connect_timeout=2,
        )
        try:
            conn.connect()
            return True
        except Exception:  # noqa: BLE001 - still booting
            return False
        finally:
            try:
                conn.collect()
            except Exception:  # noqa: BLE001, S110 - best effort
                pass

    def destroy(self):
        super().destroy()
        if self.epmd is not None and self.epmd.poll() is None:
            self.epmd.kill()
            self.epmd.wait()


class PostgreSQL(Server):
    """A private PostgreSQL cluster (initdb), run as the postgres user."""

    kind = "postgresql"
    # Fast shutdown: sessions are terminated, as in a restart or failover.
    stop_signal = signal.SIGINT

    def __init__(self, host):
        super().__init__(host)
        bindir = _pg_bindir()
        self.postgres = os.path.join(bindir, "postgres")
        self.data = os.path.join(self.base, "data")
        try:
            self.user = pwd.getpwnam("postgres")
        except KeyError:
            backends.unavailable("PostgreSQL", "no postgres user")
        os.chown(self.base, self.user.pw_uid, self.user.pw_gid)
        subprocess.run(
            [
                os.path.join(bindir, "initdb"),
                "-D",
                self.data,
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
            **self.popen_kwargs(),
        )
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write(
                "host all all %s/32 trust\nhost all all 10.241.0.0/16 "
                "trust\n" % host
            )

    def popen_kwargs(self):
        return {
            "user": self.user.pw_uid,
            "group": self.user.pw_gid,
            "cwd": self.base,
        }

    def command(self):
        return [
            self.postgres,
            "-D",
            self.data,
            "-p",
            str(self.port),
            "-k",
            self.base,
            "-c",
            "listen_addresses=%s" % self.host,
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
            "-c",
            "shared_buffers=32MB",
        ]

    def url(self, database="postgres"):
        return "postgresql+psycopg2://postgres@%s:%d/%s" % (
            self.host,
            self.port,
            database,
        )

    def ready(self):
        import psycopg2

        try:
            psycopg2.connect(
                host=self.host,
                port=self.port,
                user="postgres",
                dbname="postgres",
                connect_timeout=2,
            ).close()
            return True
        except psycopg2.OperationalError:
            return False

    def create_database(self, name):
        import psycopg2

        conn = psycopg2.connect(
            host=self.host, port=self.port, user="postgres", dbname="postgres"
        )
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE %s" % name)
        conn.close()
        return self.url(name)


def _pg_bindir():
    roots = sorted(
        (
            os.path.join("/usr/lib/postgresql", v, "bin")
            for v in (
                os.listdir("/usr/lib/postgresql")
                if os.path.isdir("/usr/lib/postgresql")
                else ()
            )
        ),
        key=lambda p: (
            int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0
        ),
    )
    for bindir in reversed(roots):
        if os.path.exists(os.path.join(bindir, "initdb")):
            return bindir
    backends.unavailable("PostgreSQL", "no initdb under /usr/lib/postgresql")
    return None


class MariaDB(Server):
    """A private MariaDB server (mariadb-install-db), run as root."""

    kind = "mariadb"

    def __init__(self, host):
        super().__init__(host)
        self.mariadbd = _binary("mariadbd", "/usr/sbin/mariadbd")
        self.data = os.path.join(self.base, "data")
        self.socket = os.path.join(self.base, "mysqld.sock")
        subprocess.run(
            [
                _binary("mariadb-install-db"),
                "--no-defaults",
                "--datadir=%s" % self.data,
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )
        self._granted = False

    def command(self):
        return [
            self.mariadbd,
            "--no-defaults",
            "--datadir=%s" % self.data,
            "--port=%d" % self.port,
            "--bind-address=%s" % self.host,
            "--socket=%s" % self.socket,
            "--user=root",
            "--pid-file=%s" % os.path.join(self.base, "mariadb.pid"),
            "--skip-name-resolve",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=64M",
            "--innodb-flush-log-at-trx-commit=0",
            "--innodb-doublewrite=0",
            "--max-connections=300",
            "--log-error=%s" % os.path.join(self.base, "error.log"),
        ]

    def url(self, database=""):
        return "mysql+pymysql://root@%s:%d/%s?charset=utf8mb4" % (
            self.host,
            self.port,
            database,
        )

    def _connect(self, **kwargs):
        import pymysql

        return pymysql.connect(user="root", connect_timeout=2, **kwargs)

    def ready(self):
        import pymysql

        try:
            if not self._granted:
                # root@localhost only exists at first: let root in from
                # the veth addresses as well.
                conn = self._connect(unix_socket=self.socket)
                with conn.cursor() as cur:
                    cur.execute("CREATE USER IF NOT EXISTS 'root'@'%'")
                    cur.execute(
                        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' "
                        "WITH GRANT OPTION"
                    )
                conn.close()
                self._granted = True
            self._connect(host=self.host, port=self.port).close()
            return True
        except pymysql.err.MySQLError:
            return False

    def create_database(self, name):
        conn = self._connect(host=self.host, port=self.port, autocommit=True)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE %s CHARACTER SET utf8mb4" % name)
        conn.close()
        return self.url(name)
