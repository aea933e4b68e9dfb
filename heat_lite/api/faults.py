"""The one place where exceptions become Heat's JSON error body.

``FaultWrapper`` is the outermost WSGI middleware: an exception from
anywhere inside becomes ``{"code", "title", "explanation", "error":
{"type", "message", "traceback"}}`` with the exception's HTTP code, and an
error response produced by the framework (routing, webob) gets the same
JSON shape. Unknown exceptions become a 500 whose traceback is logged and
never shown.
"""

import json
import logging
import math

import oslo_messaging as messaging
import webob
import webob.exc

from heat_lite.common import exception

LOG = logging.getLogger(__name__)
_REMOTE = "_Remote"
# Set by api.request when a body was left unread (kept here: faults is
# the outermost layer and imports nothing of the API).
CLOSE_CONNECTION = "heat_lite.close_connection"
# Whether ``dumps`` has logged a non-finite number yet (once a process:
# a poller would repeat it every few seconds).
_WARNED = []


def _title_and_explanation(code):
    cls = webob.exc.status_map.get(code, webob.exc.HTTPInternalServerError)
    return cls.title, cls.explanation


def error_body(code, error_type, message):
    title, explanation = _title_and_explanation(code)
    return {
        "code": code,
        "title": title,
        "explanation": explanation,
        "error": {"type": error_type, "message": message, "traceback": None},
    }


def dumps(body):
    """The one writer of JSON answers (bytes): never ``NaN`` nor
    ``Infinity``, which Python's json writes but no JSON parser reads
    (python-heatclient's ``resp.json()`` aside; browsers' ``JSON.parse``
    and ``jq`` fail on the whole answer).

    Input refuses them (``common.template_format``, number parameters
    and properties, yaql results), so only a value from elsewhere (a
    cloud's or a remote Heat's answer kept as an attribute, a row
    written before) can bring one: it is sent as null.
    """
    try:
        return json.dumps(body, allow_nan=False).encode()
    except ValueError:
        # Rare by construction: the fast path costs nothing extra.
        if not _WARNED:
            _WARNED.append(True)
            LOG.warning(
                "An answer held NaN or Infinity (from a cloud or a remote "
                "stack?): sent as null"
            )
        return json.dumps(_finite(body), allow_nan=False).encode()


def _finite(value):
    """``value`` with every non-finite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_response(code, body, headers=None):
    response = webob.Response(
        status=code, content_type="application/json", charset="UTF-8"
    )
    response.body = dumps(body)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


class PassThrough(Exception):  # noqa: N818 - it carries an answer
    """A webob HTTP error to answer as it is, raised past a framework
    that would catch it (pecan re-routes on webob's 404 and 405)."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def exception_response(exc):
    """Return the webob Response for any exception."""
    if isinstance(exc, PassThrough):
        exc = exc.error
    if isinstance(exc, exception.HeatLiteException):
        error_type = type(exc).__name__
        if error_type.endswith(_REMOTE):
            error_type = error_type[: -len(_REMOTE)]
        message = exc.args[0] if exc.args else exc.message
        return json_response(
            exc.code,
            error_body(exc.code, error_type, message),
            getattr(exc, "headers", None),
        )
    if isinstance(exc, messaging.MessagingTimeout):
        return json_response(
            503,
            error_body(
                503,
                "ServiceUnavailable",
                "The orchestration engine did not answer in time.",
            ),
        )
    if isinstance(exc, webob.exc.HTTPException):
        headers = {}
        if exc.code == 405 and exc.headers.get("Allow"):
            headers["Allow"] = exc.headers["Allow"]
        return json_response(
            exc.code,
            error_body(
                exc.code, type(exc).__name__, exc.detail or exc.explanation
            ),
            headers,
        )
    LOG.exception("Unexpected error handling an API request")
    return json_response(
        500,
        error_body(
            500,
            "InternalServerError",
            "An unexpected error prevented the server from fulfilling your "
            "request.",
        ),
    )


def _heat_error(response):
    """Whether an error response already has Heat's shape (the framework's
    own errors, HTML or pecan's JSON, do not)."""
    if "json" not in (response.content_type or ""):
        return False
    try:
        body = json.loads(response.body)
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("error"), dict)


class FaultWrapper:
    """WSGI middleware turning every error into Heat's JSON body."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        request = webob.Request(environ)
        try:
            response = request.get_response(self.app)
        except Exception as exc:  # noqa: BLE001 - the single fault barrier
            response = exception_response(exc)
        if response.status_int >= 400 and not _heat_error(response):
            code = response.status_int
            cls = webob.exc.status_map.get(
                code, webob.exc.HTTPInternalServerError
            )
            headers = (
                {"Allow": response.headers["Allow"]}
                if "Allow" in response.headers
                else {}
            )
            response = json_response(
                code, error_body(code, cls.__name__, cls.explanation), headers
            )
        if environ.get(CLOSE_CONNECTION):
            response.headers["Connection"] = "close"
        return response(environ, start_response)
