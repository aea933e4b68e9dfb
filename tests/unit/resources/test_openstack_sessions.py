"""One authenticated session per trust, reused by every action of its
stacks; a token near its expiry is replaced by a new login.

The Keystone here is a real HTTP server on loopback answering token
requests (``POST /v3/auth/tokens``) with a token that expires when the
test says, and counting them, so the logins counted are the ones
keystoneauth1 really makes through the connections ``client`` caches.
"""

import datetime
import http.server
import json
import threading
import types

import pytest
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from heat_lite import conf
from heat_lite.resources.openstack import client

CONF = conf.CONF


class FakeKeystone(http.server.ThreadingHTTPServer):
    """``lifetime``: seconds the next tokens are valid for; ``logins``:
    the trust IDs of the token requests answered."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lifetime = 3600
        self.logins = []

    @property
    def url(self):
        return "http://127.0.0.1:%d/v3" % self.server_address[1]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        trust = body["auth"]["scope"]["OS-TRUST:trust"]["id"]
        self.server.logins.append(trust)
        now = datetime.datetime.now(datetime.UTC)
        expires = now + datetime.timedelta(seconds=self.server.lifetime)
        token = {
            "token": {
                "methods": ["password"],
                "issued_at": now.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
                "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
                "user": {
                    "id": "heat",
                    "name": "heat",
                    "domain": {"id": "default", "name": "Default"},
                },
                "project": {
                    "id": "demo",
                    "name": "demo",
                    "domain": {"id": "default", "name": "Default"},
                },
                "OS-TRUST:trust": {"id": trust},
                "roles": [{"id": "m", "name": "member"}],
                "catalog": [],
            }
        }
        data = json.dumps(token).encode()
        self.send_response(201)
        self.send_header(
            "X-Subject-Token", "token-%d" % len(self.server.logins)
        )
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def keystone():
    server = FakeKeystone()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    CONF.set_override("auth_strategy", "keystone", group="api")
    client.reset()
    yield server
    client.reset()
    CONF.clear_override("auth_strategy", group="api")
    server.shutdown()
    server.server_close()


class Services:
    """The engine's side as a plugin sees it: the stack's stored trust,
    and a trustee session scoped by it (``engine.trusts``), counted."""

    def __init__(self, keystone):
        self.keystone = keystone
        self.sessions = 0

    @staticmethod
    def trust_id(stack):
        return stack.get("trust_id")

    def trusted_session(self, trust_id):
        self.sessions += 1
        auth = v3.Password(
            auth_url=self.keystone.url,
            username="heat",
            password="secret",
            user_domain_id="default",
            trust_id=trust_id,
        )
        return ks_session.Session(auth=auth)


def _plugins(services, trust, count):
    """``count`` resources of one stack acting through ``trust``."""
    stack = {"id": "s-" + trust, "trust_id": trust, "tenant": "demo"}
    return [
        types.SimpleNamespace(stack=stack, services=services)
        for _ in range(count)
    ]


def test_one_login_per_trust_for_every_action(keystone):
    services = Services(keystone)
    servers = _plugins(services, "trust-a", 20) + _plugins(
        services, "trust-b", 5
    )
    tokens = set()
    for _ in range(3):  # create, then polls
        for plugin in servers:
            tokens.add(client.connection(plugin).session.get_token())
    assert sorted(keystone.logins) == ["trust-a", "trust-b"]
    assert services.sessions == 2
    assert len(tokens) == 2


def test_a_token_near_its_expiry_is_replaced_by_a_new_login(keystone):
    services = Services(keystone)
    (plugin,) = _plugins(services, "trust-a", 1)
    # keystoneauth1 logs in again when the token expires within 2 min.
    keystone.lifetime = 60
    first = client.connection(plugin).session.get_token()
    keystone.lifetime = 3600
    second = client.connection(plugin).session.get_token()
    third = client.connection(plugin).session.get_token()
    assert first != second == third
    assert keystone.logins == ["trust-a", "trust-a"]
    assert services.sessions == 1  # the same connection and session


def test_a_forgotten_trust_logs_in_afresh(keystone):
    services = Services(keystone)
    (plugin,) = _plugins(services, "trust-a", 1)
    client.connection(plugin).session.get_token()
    client.forget("trust-a")
    client.connection(plugin).session.get_token()
    assert keystone.logins == ["trust-a", "trust-a"]
    assert services.sessions == 2


class _Compute:
    def __init__(self):
        self.finds = 0

    def find_flavor(self, value, ignore_missing=True):
        self.finds += 1
        if value == "gone":
            return None
        return types.SimpleNamespace(id="id-" + value)


def test_found_ids_are_remembered_per_connection_for_a_while(monkeypatch):
    conn = types.SimpleNamespace(compute=_Compute())
    other = types.SimpleNamespace(compute=_Compute())
    for _ in range(20):
        assert client.find_id(conn, "compute", "find_flavor", "m1") == "id-m1"
    assert conn.compute.finds == 1
    client.find_id(other, "compute", "find_flavor", "m1")
    assert other.compute.finds == 1  # another identity asks itself
    for _ in range(2):  # a miss is not remembered
        assert (
            client.find_id(
                conn, "compute", "find_flavor", "gone", ignore_missing=True
            )
            is None
        )
    assert conn.compute.finds == 3
    monkeypatch.setattr(client, "FOUND_TTL", 0.0)
    client.find_id(conn, "compute", "find_flavor", "m2")
    client.find_id(conn, "compute", "find_flavor", "m2")
    assert conn.compute.finds == 5  # expired at once
