"""A cloud that does not answer a poll: tried again, a write never twice.

The cloud here is a real HTTP server on loopback speaking just enough of
Nova's API for openstacksdk (version discovery, a server, its actions)
that resets the connection of the requests it is told to, so the errors
are the ones openstacksdk and keystoneauth1 really raise.
"""

import http.server
import json
import socket
import struct
import threading

import pytest
from keystoneauth1 import exceptions as ks_exc

from heat_lite import conf
from heat_lite.resources import base, registry, transient
from heat_lite.resources.openstack import client, nova

CONF = conf.CONF
SERVER = "5f0b2b3e-1111-4a4a-9c9c-000000000001"


class FakeNova(http.server.ThreadingHTTPServer):
    """``reset``: [(method, path prefix)], each resets one matching
    request; ``answer``: {(method, path): (status, body)} overrides;
    ``seen``: every (method, path) asked."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reset = []
        self.answer = {}
        self.seen = []
        self.status = "ACTIVE"

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _serve(self):
        fake = self.server
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.split("?")[0].rstrip("/")
        fake.seen.append((self.command, path))
        for rule in list(fake.reset):
            if self.command == rule[0] and path.startswith(rule[1]):
                fake.reset.remove(rule)
                # RST instead of FIN: "Connection reset by peer".
                linger = struct.pack("ii", 1, 0)
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, linger
                )
                self.connection.close()
                self.close_connection = True
                return
        status, body = fake.answer.get(
            (self.command, path), self._default(path)
        )
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _default(self, path):
        version = {
            "id": "v2.1",
            "status": "CURRENT",
            "version": "2.96",
            "min_version": "2.1",
            "links": [{"rel": "self", "href": self.server.url + "/v2.1/"}],
        }
        if path in ("", "/v2.1"):
            return 200, {"version": version, "versions": [version]}
        if path == "/v2.1/servers/" + SERVER:
            return 200, {
                "server": {
                    "id": SERVER,
                    "name": "s-r",
                    "status": self.server.status,
                }
            }
        if path == "/v2.1/servers":
            return 202, {"server": {"id": SERVER}}
        return 202, {}

    do_GET = do_POST = do_PUT = do_DELETE = _serve


@pytest.fixture
def cloud(tmp_path):
    fake = FakeNova()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    path = tmp_path / "clouds.yaml"
    path.write_text(
        "clouds:\n  fake:\n    auth_type: none\n"
        "    auth: {endpoint: '%s'}\n"
        "    compute_endpoint_override: '%s/v2.1/'\n" % (fake.url, fake.url)
    )
    CONF.set_override("cloud", "fake", group="openstack")
    CONF.set_override("clouds_yaml", str(path), group="openstack")
    client.reset()
    yield fake
    client.reset()
    CONF.clear_override("cloud", group="openstack")
    CONF.clear_override("clouds_yaml", group="openstack")
    CONF.clear_override("transient_retry_timeout", group="openstack")
    fake.shutdown()
    fake.server_close()
    thread.join()


def _server():
    values = nova.Server.validate_properties(
        {"flavor": "f", "image": "i"}, "resources.r.properties"
    )
    return nova.Server(
        "r",
        "OS::Nova::Server",
        values,
        resource_id=SERVER,
        stack={"name": "s", "id": "i", "record_uuid": "0123456789abcdef"},
    )


def _gets(fake):
    return fake.seen.count(("GET", "/v2.1/servers/" + SERVER))


def test_a_reset_poll_is_polled_again_not_failed(cloud):
    """What failed the first benchmark: one Nova poll reset."""
    server = _server()
    client.connection().compute.get_server(SERVER)  # discovery done
    cloud.reset.append(("GET", "/v2.1/servers/" + SERVER))
    with pytest.raises(base.PollDelay) as wait:
        server.check_create_complete(SERVER)
    assert wait.value.seconds == transient.FIRST_WAIT
    assert isinstance(wait.value.__cause__, ks_exc.ConnectFailure)
    assert "Connection reset by peer" in str(wait.value.__cause__)
    assert server.check_create_complete(SERVER) is True
    assert _gets(cloud) == 3


def test_unanswered_polls_back_off_then_fail_after_the_timeout(cloud):
    CONF.set_override("transient_retry_timeout", 3600, group="openstack")
    server = _server()
    path = "/v2.1/servers/" + SERVER
    cloud.answer[("GET", path)] = (503, {"message": "busy"})
    waits = []
    for _ in range(7):
        with pytest.raises(base.PollDelay) as wait:
            server.check_delete_complete(True)
        waits.append(wait.value.seconds)
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    # An answer starts the count afresh.
    del cloud.answer[("GET", path)]
    assert server.check_create_complete(SERVER) is True
    cloud.answer[("GET", path)] = (502, {"message": "bad gateway"})
    with pytest.raises(base.PollDelay) as wait:
        server.check_create_complete(SERVER)
    assert wait.value.seconds == 0.5
    # Nova's "Unexpected API Error" to a poll: asked again, as Heat does.
    cloud.answer[("GET", path)] = (500, {"message": "Unexpected API Error"})
    with pytest.raises(base.PollDelay) as wait:
        server.check_create_complete(SERVER)
    assert wait.value.seconds == 1.0
    cloud.answer[("GET", path)] = (502, {"message": "bad gateway"})
    # Past the timeout the resource fails with the cloud's error.
    CONF.set_override("transient_retry_timeout", 0, group="openstack")
    with pytest.raises(client.sdk_exc.HttpException) as err:
        server.check_create_complete(SERVER)
    assert err.value.status_code == 502


def test_a_cloud_error_that_is_an_answer_fails_at_once(cloud):
    server = _server()
    cloud.answer[("GET", "/v2.1/servers/" + SERVER)] = (
        400,
        {"message": "boom"},
    )
    with pytest.raises(client.sdk_exc.HttpException):
        server.check_create_complete(SERVER)


def test_a_write_in_a_poll_that_gets_no_answer_is_not_sent_again(cloud):
    """A resize (POST .../action) reset may have happened: failing is
    right, sending it again is not."""
    server = _server()
    cloud.reset.append(("POST", "/v2.1/servers/" + SERVER + "/action"))
    steps = [
        {"kind": "resize", "phase": "start", "flavor_id": "f2", "flavor": "b"}
    ]
    with pytest.raises(ks_exc.ConnectFailure):
        server.check_update_complete({"steps": steps})
    actions = [s for s in cloud.seen if s[1].endswith("/action")]
    assert actions == [("POST", "/v2.1/servers/%s/action" % SERVER)]


def test_a_create_that_gets_no_answer_is_sent_once(cloud):
    server = _server()
    server.resource_id = None
    cloud.reset.append(("POST", "/v2.1/servers"))
    with pytest.raises(ks_exc.ConnectFailure):
        server.handle_create()
    assert cloud.seen.count(("POST", "/v2.1/servers")) == 1


def test_what_counts_as_no_answer():
    assert transient.is_transient(ConnectionResetError(104, "reset"))
    assert not transient.is_transient(ks_exc.SSLError("bad cert"))
    assert not transient.is_transient(ValueError("x"))
    try:
        try:
            raise ConnectionResetError(104, "reset")
        except ConnectionResetError:
            # As keystoneauth1 raises it: in the handler, no "from".
            raise ks_exc.ConnectFailure("Unable to connect")  # noqa: B904
    except ks_exc.ConnectFailure as exc:
        assert transient.is_transient(exc)  # no request known: a poll's


def test_every_check_of_every_cloud_type_is_polled():
    """A new OpenStack type's check cannot miss the retry."""
    missing = []
    for name, cls in sorted(registry.load().items()):
        if not cls.__module__.startswith("heat_lite.resources.openstack"):
            continue
        for attr in dir(cls):
            if attr.startswith("check_") and attr.endswith("_complete"):
                if not getattr(getattr(cls, attr), "polled", False):
                    missing.append("%s.%s" % (name, attr))
    assert missing == []
