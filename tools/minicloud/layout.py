"""Where one test cloud lives: ports, names, directories, URLs.

A ``Layout`` is everything that identifies one running cloud, and it is
what the launcher records in ``<dir>/state.json`` so that ``stop`` and
``status`` (or a test session) can find the cloud again. The database
names and the RabbitMQ vhost carry a per-run prefix, so two clouds (or a
cloud and the heat_lite tests) never share data.
"""

import dataclasses
import json
import os
import socket
import uuid

# The services listen on loopback only, on ports of their own: the default
# base keeps clear of a real deployment's (5000, 9292, 8778, 9696, 8774)
# and of the kernel's ephemeral range.
DEFAULT_BASE_PORT = 17000
SERVICES = ("keystone", "glance", "placement", "neutron", "nova")
DB_NAMES = (
    "keystone",
    "glance",
    "placement",
    "neutron",
    "nova_api",
    "nova",
    "nova_cell0",
)
HOST = "127.0.0.1"
REGION = "RegionOne"


def _free(port):
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _any_free_port():
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def pick_ports(base):
    """{service: port}: ``base`` and the next four, or any free ports when
    ``base`` is 0.

    :raises RuntimeError: naming the ports already taken.
    """
    if not base:
        return {name: _any_free_port() for name in SERVICES}
    ports = {name: base + i for i, name in enumerate(SERVICES)}
    taken = sorted(p for p in ports.values() if not _free(p))
    if taken:
        raise RuntimeError(
            "ports already in use on %s: %s (choose another "
            "--base-port, or 0 for any free ports)"
            % (HOST, ", ".join(map(str, taken)))
        )
    return ports


@dataclasses.dataclass
class Layout:
    """One cloud's identity; JSON-serialisable (see ``save``)."""

    dir: str
    venv: str
    ports: dict
    mysql_url: str
    rabbit: str
    password: str
    prefix: str = dataclasses.field(
        default_factory=lambda: "mc%s" % uuid.uuid4().hex[:8]
    )
    orchestration_url: str = ""
    pids: dict = dataclasses.field(default_factory=dict)
    timings: dict = dataclasses.field(default_factory=dict)

    # Names ---------------------------------------------------------------
    def database(self, name):
        return "%s_%s" % (self.prefix, name)

    def db_url(self, name):
        return "%s/%s?charset=utf8mb4" % (self.mysql_url, self.database(name))

    @property
    def vhost(self):
        return "minicloud_%s" % self.prefix

    @property
    def transport_url(self):
        return "rabbit://%s/%s" % (self.rabbit, self.vhost)

    def url(self, service):
        return "http://%s:%d" % (HOST, self.ports[service])

    @property
    def auth_url(self):
        return self.url("keystone") + "/v3"

    # Paths ---------------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def bin(self, name):
        return os.path.join(self.venv, "bin", name)

    @property
    def state_file(self):
        return self.path("state.json")

    @property
    def clouds_yaml(self):
        return self.path("clouds.yaml")

    def save(self):
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(dataclasses.asdict(self), f, indent=2, sort_keys=True)
        os.replace(tmp, self.state_file)

    @classmethod
    def load(cls, directory):
        """The layout recorded in ``directory``.

        :raises FileNotFoundError: if no cloud was started there.
        """
        with open(os.path.join(directory, "state.json")) as f:
            return cls(**json.load(f))

    # Credentials ---------------------------------------------------------
    def auth(self, user="admin", project="admin"):
        """keystoneauth1 password options of a user of this cloud."""
        return {
            "auth_url": self.auth_url,
            "username": user,
            "password": self.password,
            "project_name": project,
            "user_domain_name": "Default",
            "project_domain_name": "Default",
        }
