"""The webhook takes no token (``auth.NoTokenRoutes``), in keystone mode
as in noauth: only ``POST /v1/{p}/apps/{app}/webhook`` passes without
one, with a context of no user and no roles in the URL's project;
keystonemiddleware refuses everything else without a token (no Keystone
is needed for that refusal: it happens before any is asked)."""

import pytest
import webob

from heat_lite import conf
from heat_lite.api import auth, faults

CONF = conf.CONF


def _seen(environ, start_response):
    ctxt = environ[auth.ENV_KEY]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [
        ("%s %s %s" % (ctxt.project_id, ctxt.user_id, ctxt.roles)).encode()
    ]


@pytest.fixture(params=["keystone", "noauth"])
def wsgi(request):
    CONF([], project="heat_lite")
    CONF.set_override("auth_strategy", request.param, group="api")
    yield faults.FaultWrapper(auth.wrap(_seen))
    CONF.clear_override("auth_strategy", group="api")


@pytest.mark.parametrize(
    "path", ["/v1/p/apps/shop/webhook", "/v1/p/apps/shop/webhook/"]
)
def test_the_webhook_passes_without_a_token_and_without_roles(wsgi, path):
    request = webob.Request.blank(path, method="POST")
    # Whatever the request says of itself, it gets no user and no roles.
    request.headers["X-Roles"] = "admin"
    request.headers["X-Auth-User"] = "root"
    response = request.get_response(wsgi)
    assert response.status_int == 200
    assert response.text == "p None []"


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/v1/p/apps/shop/webhook"),
        ("POST", "/v1/p/apps/shop/pushes"),
        ("POST", "/v1/p/apps/shop/webhook/x"),
        ("POST", "/v1/p/apps/shop/builds/webhook"),
        ("POST", "/v1/p/stacks/webhook"),
        ("POST", "/v1/p/apps/webhook"),
    ],
)
def test_nothing_else_passes_without_a_token(method, path):
    # What keystone mode puts behind the no-token routes is
    # keystonemiddleware, which would ask a Keystone for its refusal's
    # WWW-Authenticate header: stood in for by a refusal here.
    def refuse(environ, start_response):
        start_response("401 Unauthorized", [("Content-Type", "text/plain")])
        return [b"token required"]

    wsgi = auth.NoTokenRoutes(_seen, refuse)
    response = webob.Request.blank(path, method=method).get_response(wsgi)
    assert response.status_int == 401


def test_keystone_mode_puts_keystonemiddleware_behind_the_webhook():
    CONF([], project="heat_lite")
    CONF.set_override("auth_strategy", "keystone", group="api")
    try:
        wrapped = auth.wrap(_seen)
    finally:
        CONF.clear_override("auth_strategy", group="api")
    assert isinstance(wrapped, auth.NoTokenRoutes)
    assert isinstance(wrapped.authenticated, auth.HandleTokens)
