"""The dashboard's server side without a server: which requests are
browsers, the CSRF check, the session cookie, the files it serves and
the WSGI layer in front of the API."""

import gzip
import json
import re

import pytest
import webob

from heat_lite.api import dashboard
from heat_lite.api.dashboard import session, static
from heat_lite.common import exception
from heat_lite.engine.endpoint import reads

TOKEN = "gAAAAAB-a-fernet-token"


def _environ(method="POST", **extra):
    environ = webob.Request.blank("/v1/p/stacks", method=method).environ
    environ.update(extra)
    return environ


@pytest.mark.parametrize(
    "accept,html",
    [
        ("text/html,application/xhtml+xml,*/*;q=0.8", True),
        ("application/json", False),
        ("*/*", False),
        (None, False),
        ("application/json, text/html;q=0.5", False),
    ],
)
def test_wants_html(accept, html):
    environ = webob.Request.blank("/").environ
    if accept:
        environ["HTTP_ACCEPT"] = accept
    assert dashboard.wants_html(environ) is html


def test_csrf_token_is_derived_from_the_token_and_hides_it():
    value = session.csrf_token(TOKEN)
    assert value == session.csrf_token(TOKEN)
    assert value != session.csrf_token(TOKEN + "x")
    assert TOKEN not in value


def test_check_csrf():
    good = session.csrf_token(TOKEN)
    session.check_csrf(_environ("GET"), TOKEN)
    session.check_csrf(_environ(HTTP_X_CSRF_TOKEN=good), TOKEN)
    session.check_csrf(
        _environ(
            HTTP_X_CSRF_TOKEN=good,
            HTTP_ORIGIN="http://localhost:80",
            HTTP_HOST="localhost:80",
        ),
        TOKEN,
    )
    for bad in (
        _environ(),
        _environ(HTTP_X_CSRF_TOKEN="forged"),
        _environ(HTTP_X_CSRF_TOKEN=good, HTTP_ORIGIN="http://evil"),
        _environ(HTTP_X_CSRF_TOKEN=good, HTTP_ORIGIN="null"),
        _environ(HTTP_X_CSRF_TOKEN=good, HTTP_REFERER="http://evil/x"),
    ):
        with pytest.raises(exception.Forbidden):
            session.check_csrf(bad, TOKEN)


def test_cookie_round_trip_and_flags():
    header = session.set_cookie_header(_environ(), TOKEN, 3600.7)
    parts = header.split("; ")
    assert parts[0] == "%s=%s" % (session.COOKIE, TOKEN)
    assert {"Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=3600"} <= set(
        parts
    )
    assert "Secure" not in parts
    secure = session.set_cookie_header(
        _environ(**{"wsgi.url_scheme": "https"}), TOKEN, 10
    )
    assert secure.endswith("; Secure")
    cleared = session.set_cookie_header(_environ(), None, 0)
    assert cleared.startswith(session.COOKIE + "=;") and "Max-Age=0" in cleared
    environ = _environ(HTTP_COOKIE="a=b; %s=%s; c=d" % (session.COOKIE, TOKEN))
    assert session.cookie_token(environ) == TOKEN
    assert session.cookie_token(_environ(HTTP_COOKIE="a=b")) is None
    assert session.cookie_token(_environ()) is None


def _call(app, req):
    return req.get_response(app)


def _api(environ, start_response):
    body = json.dumps({"token": environ.get("HTTP_X_AUTH_TOKEN")}).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]


def test_cookie_becomes_the_token_only_after_the_csrf_check():
    app = dashboard.Dashboard(_api, keystone=True)
    cookie = "%s=%s" % (session.COOKIE, TOKEN)
    got = webob.Request.blank("/v1/p/stacks", headers={"Cookie": cookie})
    assert json.loads(_call(app, got).body) == {"token": TOKEN}
    post = webob.Request.blank(
        "/v1/p/stacks", method="POST", headers={"Cookie": cookie}
    )
    with pytest.raises(exception.Forbidden):
        _call(app, post)
    post.headers["X-CSRF-Token"] = session.csrf_token(TOKEN)
    assert json.loads(_call(app, post).body) == {"token": TOKEN}
    # A request's own token wins; noauth never looks at cookies.
    own = webob.Request.blank(
        "/v1/p/stacks", headers={"Cookie": cookie, "X-Auth-Token": "mine"}
    )
    assert json.loads(_call(app, own).body) == {"token": "mine"}
    noauth = dashboard.Dashboard(_api, keystone=False)
    fresh = webob.Request.blank("/v1/p/stacks", headers={"Cookie": cookie})
    assert json.loads(_call(noauth, fresh).body) == {"token": None}


def test_session_calls():
    noauth = dashboard.Dashboard(_api, keystone=False)
    answer = _call(noauth, webob.Request.blank("/dashboard/api/session"))
    assert answer.json == {"auth": "noauth"}
    assert answer.headers["Cache-Control"] == "no-store"
    wrong = _call(noauth, webob.Request.blank("/dashboard/api/login"))
    assert wrong.status_int == 405 and wrong.headers["Allow"] == "POST"
    with pytest.raises(exception.NotFound):
        _call(noauth, webob.Request.blank("/dashboard/api/nothing"))
    with pytest.raises(exception.NotSupported):
        _call(
            noauth,
            webob.Request.blank("/dashboard/api/login", method="POST"),
        )
    keystone = dashboard.Dashboard(_api, keystone=True)
    logged_out = _call(keystone, webob.Request.blank("/dashboard/api/session"))
    assert logged_out.json == {"auth": "keystone", "logged_in": False}
    cross = webob.Request.blank(
        "/dashboard/api/login",
        method="POST",
        headers={"Origin": "http://evil"},
    )
    with pytest.raises(exception.Forbidden):
        _call(keystone, cross)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"user": "u", "password": "p"},
        {"user": "u", "password": "", "project": "x"},
        {"user": "u", "password": "p", "project": "x", "extra": 1},
        {"user": 1, "password": "p", "project": "x"},
    ],
)
def test_login_bodies_refused_before_keystone(body):
    with pytest.raises(exception.BadRequest):
        session.login(body)


def test_files_served_by_name_only():
    files = static.Files()
    app = dashboard.Dashboard(_api, keystone=False)
    index = _call(app, webob.Request.blank("/dashboard/"))
    assert index.status_int == 200 and index.content_type == "text/html"
    assert "script-src 'self'" in index.headers["Content-Security-Policy"]
    again = webob.Request.blank(
        "/dashboard/", headers={"If-None-Match": index.headers["ETag"]}
    )
    assert _call(app, again).status_int == 304
    redirect = _call(app, webob.Request.blank("/dashboard"))
    assert redirect.status_int == 301
    for path in (
        "/dashboard/../setup.cfg",
        "/dashboard/static.py",
        "/dashboard/x/app.js",
    ):
        assert _call(app, webob.Request.blank(path)).status_int == 404
    post = webob.Request.blank("/dashboard/app.js", method="POST")
    assert _call(app, post).status_int == 405
    # Every file the page refers to is one that is served.
    names = set(files.names())
    html = index.text
    for ref in re.findall(r'(?:src|href)="([^"#:]+)"', html):
        assert ref in names, ref
    for name in names:
        if name.endswith(".js"):
            body = _call(app, webob.Request.blank("/dashboard/" + name)).text
            for ref in re.findall(r'from "\./([^"]+)"', body):
                assert ref in names, (name, ref)


def test_files_gzipped_for_browsers_that_take_it():
    app = dashboard.Dashboard(_api, keystone=False)
    plain = _call(app, webob.Request.blank("/dashboard/stack.js"))
    zipped = _call(
        app,
        webob.Request.blank(
            "/dashboard/stack.js", headers={"Accept-Encoding": "gzip, br"}
        ),
    )
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Content-Encoding" not in plain.headers
    assert plain.headers["Vary"] == zipped.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(zipped.body) == plain.body
    assert len(zipped.body) < len(plain.body) / 2
    # Each representation has its own ETag, and a 304 of its own.
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    again = webob.Request.blank(
        "/dashboard/stack.js",
        headers={
            "Accept-Encoding": "gzip",
            "If-None-Match": zipped.headers["ETag"],
        },
    )
    assert _call(app, again).status_int == 304


@pytest.mark.parametrize(
    "value,expected",
    [
        ("COMPLETE", {"status": ["COMPLETE"]}),
        ("IN_PROGRESS", {"status": ["IN_PROGRESS"]}),
        (
            "CREATE_IN_PROGRESS",
            {"status": ["IN_PROGRESS"], "action": ["CREATE"]},
        ),
        ("UPDATE_FAILED", {"status": ["FAILED"], "action": ["UPDATE"]}),
    ],
)
def test_status_filters(value, expected):
    assert reads.stack_filters({"status": [value]}) == expected
