"""The web dashboard, served by the API process at ``/dashboard/``.

A WSGI layer in front of authentication. It answers ``/dashboard/``
itself: the page's files (plain HTML, CSS and JavaScript, no build step)
and, under ``/dashboard/api/``, the session of the page (which auth
strategy is in force; in keystone mode login, who am I, logout). Every
other request goes on to the API unchanged, except that in keystone mode
a request carrying the session cookie gets its token back as
``X-Auth-Token`` (after the CSRF check, ``session.check_csrf``): the page
reads and changes stacks through the same public v1 API as any client,
with the same authentication and policy.
"""

import json

import webob

from heat_lite import conf
from heat_lite.api import faults
from heat_lite.api.dashboard import session, static
from heat_lite.common import exception

CONF = conf.CONF
PREFIX = "/dashboard"
_API = PREFIX + "/api/"
_MAX_LOGIN_BODY = 16384


def wants_html(environ):
    """A browser's navigation (``text/html`` preferred over JSON); API
    clients ask for JSON or anything (``*/*``) and keep getting JSON."""
    accept = webob.Request(environ).accept
    offers = accept.acceptable_offers(["application/json", "text/html"])
    return bool(offers) and offers[0][0] == "text/html"


def _json(status, body, headers=None):
    return faults.json_response(status, body, headers)


class Dashboard:
    """Serves /dashboard/; passes everything else to ``app``."""

    def __init__(self, app, keystone):
        self.app = app
        self.keystone = keystone
        self.files = static.Files()

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == PREFIX:
            response = webob.Response(status=301, location=PREFIX + "/")
        elif path.startswith(_API):
            response = self._session_api(environ, path[len(_API) :])
        elif path.startswith(PREFIX + "/"):
            request = webob.Request(environ)
            if request.method not in ("GET", "HEAD"):
                response = _json(
                    405,
                    faults.error_body(405, "HTTPMethodNotAllowed", "GET only"),
                    {"Allow": "GET, HEAD"},
                )
            else:
                response = self.files.response(
                    request, path[len(PREFIX) + 1 :]
                ) or _json(
                    404, faults.error_body(404, "HTTPNotFound", "No such file")
                )
        else:
            if self.keystone:
                self._token_from_cookie(environ)
            return self.app(environ, start_response)
        return response(environ, start_response)

    @staticmethod
    def _token_from_cookie(environ):
        """Put the cookie's token where keystonemiddleware looks for it.

        A request with its own ``X-Auth-Token`` is left alone: the cookie
        only ever stands in for a missing header.
        """
        if environ.get("HTTP_X_AUTH_TOKEN"):
            return
        token = session.cookie_token(environ)
        if token:
            session.check_csrf(environ, token)
            environ["HTTP_X_AUTH_TOKEN"] = token

    # /dashboard/api/... ---------------------------------------------------
    def _session_api(self, environ, name):
        method = environ["REQUEST_METHOD"]
        routes = {
            ("session", "GET"): self._show_session,
            ("login", "POST"): self._login,
            ("logout", "POST"): self._logout,
        }
        handler = routes.get((name, method))
        if handler is None:
            allowed = sorted(m for n, m in routes if n == name)
            if not allowed:
                raise exception.NotFound(message="No such dashboard call")
            return _json(
                405,
                faults.error_body(405, "HTTPMethodNotAllowed", method),
                {"Allow": ", ".join(allowed)},
            )
        response = handler(environ)
        response.headers["Cache-Control"] = "no-store"
        return response

    def _show_session(self, environ):
        if not self.keystone:
            return _json(200, {"auth": "noauth"})
        token = session.cookie_token(environ)
        who = session.whoami(token) if token else None
        if who is None:
            return _json(200, {"auth": "keystone", "logged_in": False})
        return _json(
            200,
            dict(
                who,
                auth="keystone",
                logged_in=True,
                csrf_token=session.csrf_token(token),
            ),
        )

    def _login(self, environ):
        if not self.keystone:
            raise exception.NotSupported(
                message="Login is for auth_strategy=keystone only."
            )
        if not session.same_origin(environ):
            raise exception.Forbidden(message="Cross-origin login refused.")
        raw = environ["wsgi.input"].read(_MAX_LOGIN_BODY + 1)
        if len(raw) > _MAX_LOGIN_BODY:
            raise exception.RequestTooLarge(message="The login is too large.")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            raise exception.BadRequest(
                message="The request body is not valid JSON."
            ) from None
        token, who, lifetime = session.login(body)
        return _json(
            200,
            dict(
                who,
                auth="keystone",
                logged_in=True,
                csrf_token=session.csrf_token(token),
            ),
            {
                "Set-Cookie": session.set_cookie_header(
                    environ, token, lifetime
                )
            },
        )

    def _logout(self, environ):
        token = session.cookie_token(environ)
        if token:
            session.check_csrf(environ, token)
            session.revoke(token)
        response = webob.Response(status=204)
        response.headers["Set-Cookie"] = session.set_cookie_header(
            environ, None, 0
        )
        return response


def wrap(app):
    """``app`` behind the dashboard, when ``[api] dashboard`` is on."""
    if not CONF.api.dashboard:
        return app
    return Dashboard(app, CONF.api.auth_strategy == "keystone")
