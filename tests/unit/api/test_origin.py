"""What a web page may make a browser send (``api.origin.Guard``), on a
WSGI app behind the fault barrier, without a server: Hosts in noauth,
Origins of state-changing requests, the body's media type."""

import json

import pytest
import webob

from heat_lite import conf
from heat_lite.api import faults, origin

CONF = conf.CONF
PORT = 8004


def _ok(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b"{}"]


@pytest.fixture
def settings():
    """Set [api] options; every override is cleared afterwards."""
    CONF([], project="heat_lite")
    names = []

    def set_(**values):
        for name, value in values.items():
            group = None if name == "heat_waitcondition_server_url" else "api"
            CONF.set_override(name, value, group=group)
            names.append((name, group))

    set_(bind_host="127.0.0.1", bind_port=PORT)
    yield set_
    for name, group in names:
        CONF.clear_override(name, group=group)


def _send(path="/v1/p/stacks", method="GET", body=None, **headers):
    app = faults.FaultWrapper(origin.wrap(_ok))
    request = webob.Request.blank(path, method=method)
    if body is not None:
        request.body = body
    request.environ.pop("CONTENT_TYPE", None)
    # webob.Request.blank makes Host "localhost:80": say it explicitly.
    request.headers["Host"] = headers.pop("Host", "127.0.0.1:%d" % PORT)
    for name, value in headers.items():
        request.headers[name.replace("_", "-")] = value
    return request.get_response(app)


def _refused(response, code, error_type):
    assert response.status_int == code, response.body
    assert response.json["error"]["type"] == error_type
    assert response.json["code"] == code
    return response.json["error"]["message"]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:%d" % PORT,
        "localhost:%d" % PORT,
        "LocalHost.:%d" % PORT,
        "[::1]:%d" % PORT,
    ],
)
def test_noauth_answers_its_own_hosts(settings, host):
    assert _send(Host=host).status_int == 200


@pytest.mark.parametrize(
    "host",
    [
        "rebind.test:%d" % PORT,
        "rebind.test",
        "127.0.0.1:9999",
        "localhost",
        "10.0.0.1:%d" % PORT,
        "[::1]",
    ],
)
def test_noauth_refuses_other_hosts(settings, host):
    for method in ("GET", "POST"):
        message = _refused(
            _send(method=method, Host=host), 403, "HostNotAllowed"
        )
        assert host in message and "allowed_hosts" in message


def test_hosts_from_options(settings):
    settings(
        allowed_hosts=["heat.example.com", "Proxy.Example:8443", "[fd00::1]"],
        heat_waitcondition_server_url="http://signals.example:8000/",
    )
    for host in (
        "heat.example.com",
        "heat.example.com:443",
        "proxy.example:8443",
        "[fd00::1]:1234",
        "signals.example:8000",
    ):
        assert _send(Host=host).status_int == 200, host
    for host in ("proxy.example:8444", "proxy.example", "signals.example"):
        _refused(_send(Host=host), 403, "HostNotAllowed")


def test_wildcard_bind_answers_any_address(settings):
    """Bound to every address, any address is the API's own: a page
    loaded from an address is served by it (only names are rebound)."""
    settings(bind_host="0.0.0.0", allow_insecure_noauth=True)
    for host in ("10.1.2.3:%d" % PORT, "[fd00::5]:%d" % PORT):
        assert _send(Host=host).status_int == 200, host
    _refused(_send(Host="10.1.2.3:1"), 403, "HostNotAllowed")
    _refused(_send(Host="rebind.test:%d" % PORT), 403, "HostNotAllowed")


def test_keystone_checks_no_host(settings):
    """A rebound page has neither a token nor the dashboard's cookie."""
    settings(auth_strategy="keystone")
    assert _send(Host="rebind.test:%d" % PORT).status_int == 200


@pytest.mark.parametrize("strategy", ["noauth", "keystone"])
def test_cross_origin_changes_are_refused(settings, strategy):
    settings(auth_strategy=strategy)
    body = b"{}"
    own = "http://127.0.0.1:%d" % PORT
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for evil in ("http://evil.example", "null", "http://127.0.0.1:1"):
            response = _send(
                method=method,
                body=body,
                Origin=evil,
                Content_Type="application/json",
            )
            message = _refused(response, 403, "CrossOriginRefused")
            assert evil in message and "CSRF" in message
            # The body was left unread: the connection is not reused.
            assert response.headers["Connection"] == "close"
        same = _send(
            method=method, body=body, Origin=own, Content_Type=JSON_UTF8
        )
        assert same.status_int == 200
    # Reads from anywhere are answered (the page cannot read them).
    assert _send(Origin="http://evil.example").status_int == 200


def test_configured_origins(settings):
    settings(allowed_origins=["https://Heat.Example.com/"])
    response = _send(
        method="POST",
        body=b"{}",
        Origin="https://heat.example.com",
        Content_Type="application/json",
    )
    assert response.status_int == 200
    _refused(
        _send(
            method="POST",
            body=b"{}",
            Origin="http://heat.example.com",
            Content_Type="application/json",
        ),
        403,
        "CrossOriginRefused",
    )


JSON_UTF8 = "application/json; charset=UTF-8"


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "application/octet-stream",
    ],
)
def test_bodies_must_be_json(settings, content_type):
    """What a form or a no-cors fetch can send to any origin unasked."""
    headers = {"Content_Type": content_type} if content_type else {}
    response = _send(method="POST", body=b'{"stack_name": "x"}', **headers)
    message = _refused(response, 415, "UnsupportedMediaType")
    assert "application/json" in message
    assert response.headers["Connection"] == "close"


@pytest.mark.parametrize(
    "content_type", ["application/json", JSON_UTF8, "Application/JSON"]
)
def test_json_bodies_pass(settings, content_type):
    response = _send(method="POST", body=b"{}", Content_Type=content_type)
    assert response.status_int == 200


def test_requests_without_a_body_need_no_type(settings):
    for method in ("GET", "DELETE", "POST"):
        assert _send(method=method).status_int == 200
    # heatclient's DELETE says octet-stream, with nothing in it.
    response = _send(method="DELETE", Content_Type="application/octet-stream")
    assert response.status_int == 200


def test_a_chunked_body_is_a_body(settings):
    app = faults.FaultWrapper(origin.wrap(_ok))
    request = webob.Request.blank("/v1/p/stacks", method="POST")
    request.headers["Host"] = "127.0.0.1:%d" % PORT
    request.headers["Transfer-Encoding"] = "chunked"
    request.headers["Content-Type"] = "text/plain"
    response = request.get_response(app)
    assert response.status_int == 415
    assert json.loads(response.body)["error"]["type"] == (
        "UnsupportedMediaType"
    )


WEBHOOK = "/v1/p/apps/shop/webhook"


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/x-www-form-urlencoded; charset=UTF-8"],
)
def test_a_webhook_takes_what_git_servers_send(settings, content_type):
    """A browser can post such a form too, but not with the signature
    header the engine requires (the handler answers 401 without one)."""
    response = _send(
        WEBHOOK, method="POST", body=b"payload=x", Content_Type=content_type
    )
    assert response.status_int == 200


@pytest.mark.parametrize(
    "path,content_type,headers",
    [
        (WEBHOOK, "text/plain", {}),
        (WEBHOOK, "multipart/form-data; boundary=x", {}),
        (WEBHOOK, None, {}),
        # The form type, only at the webhook.
        ("/v1/p/apps/shop/pushes", "application/x-www-form-urlencoded", {}),
        ("/v1/p/stacks", "application/x-www-form-urlencoded", {}),
        # The Origin and Host checks hold at the webhook too.
        (WEBHOOK, "application/json", {"Origin": "http://evil.example"}),
        (WEBHOOK, "application/json", {"Host": "evil.example:8004"}),
    ],
)
def test_a_webhook_is_guarded_like_any_route(
    settings, path, content_type, headers
):
    if content_type:
        headers = dict(headers, Content_Type=content_type)
    response = _send(path, method="POST", body=b"payload=x", **headers)
    assert response.status_int in (403, 415), response.body
    assert response.headers["Connection"] == "close"
