"""The WSGI application: fault barrier → browser guard (origin) → versions
→ dashboard → auth → pecan."""

import pecan
import webob

from heat_lite.api import auth, dashboard, faults, openapi, origin, request
from heat_lite.api.controllers import base, root
from heat_lite.common import states
from heat_lite.engine import rpcapi

# Documents about the API itself, no project's data in them, served to
# anyone: its OpenAPI description, and every state vocabulary with its
# transitions (``common.states``), which the dashboard and the OSC
# plugin read instead of keeping copies.
_PUBLIC = {
    "/v1/openapi.json": openapi.build,
    "/v1/states.json": states.as_dict,
}


class _Versions:
    """Answers / and /versions before authentication, as Heat does, and
    the public documents (``_PUBLIC``). A browser navigating to / is
    sent to the dashboard when it is served."""

    def __init__(self, app, redirect_browsers=False):
        self.app = app
        self._documents = {}
        self._redirect = redirect_browsers

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "/").rstrip("/")
        if path in _PUBLIC and environ["REQUEST_METHOD"] in ("GET", "HEAD"):
            if path not in self._documents:
                self._documents[path] = _PUBLIC[path]()
            response = request.to_response(
                request.Reply(200, self._documents[path])
            )
            return response(environ, start_response)
        if path == "" and self._redirect and dashboard.wants_html(environ):
            response = webob.Response(
                status=302, location=dashboard.PREFIX + "/"
            )
            response.vary = ("Accept",)
            return response(environ, start_response)
        if path in ("", "/versions"):
            url = "%s://%s%s" % (
                environ["wsgi.url_scheme"],
                environ.get("HTTP_HOST") or environ["SERVER_NAME"],
                environ.get("SCRIPT_NAME", ""),
            )
            response = request.to_response(
                request.Reply(300, root.versions_document(url))
            )
            if self._redirect:
                response.vary = ("Accept",)
            return response(environ, start_response)
        return self.app(environ, start_response)


class _JSONOnly:
    """What pecan must not look at: the body, the Accept header and the
    query string.

    pecan parses a JSON body itself before any handler runs (all of it,
    whatever its size, and a deeply nested one raises past its error
    handling); ``Request.body`` reads and parses bodies within the
    limits instead. And pecan answers a browser's ``Accept: text/html``
    with 406 and an ERROR line, while every answer here is JSON anyway.
    And pecan's ``RestController`` takes ``?_method=`` as the HTTP method
    (a POST could become a DELETE) and pecan passes query parameters to
    controllers as arguments. So pecan sees a body of no particular type,
    a JSON Accept and no query; the original Content-Type is kept in the
    environ, and the query string is put back (``base.dispatch``) before
    a handler runs.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        environ["HTTP_ACCEPT"] = "application/json"
        if environ.get("CONTENT_TYPE"):
            environ["heat_lite.content_type"] = environ["CONTENT_TYPE"]
        environ["CONTENT_TYPE"] = "application/octet-stream"
        environ[base.QUERY_KEY] = environ.get("QUERY_STRING", "")
        environ["QUERY_STRING"] = ""
        try:
            return self.app(environ, start_response)
        finally:
            if base.QUERY_KEY in environ:
                environ["QUERY_STRING"] = environ.pop(base.QUERY_KEY)


def make_pecan_app(engine):
    """The pecan app alone: the controller tree, no auth, no faults."""
    return _JSONOnly(
        pecan.make_app(
            root.RootController(engine),
            guess_content_type_from_ext=False,
            force_canonical=False,
            debug=False,
            logging=False,
        )
    )


def setup_app(engine=None):
    """Build the API WSGI app; ``engine`` defaults to an EngineAPI."""
    from heat_lite import conf

    engine = engine or rpcapi.EngineAPI(
        timeout=conf.CONF.api.rpc_timeout,
        monitor_timeout=conf.CONF.api.rpc_call_monitor_timeout,
    )
    return faults.FaultWrapper(
        origin.wrap(
            _Versions(
                dashboard.wrap(auth.wrap(make_pecan_app(engine))),
                redirect_browsers=conf.CONF.api.dashboard,
            )
        )
    )
