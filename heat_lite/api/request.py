"""What a handler gets: the parsed request, its context and the engine."""

import hashlib

import webob

from heat_lite import conf
from heat_lite.api import auth, faults
from heat_lite.common import exception, policy, template_format

CONF = conf.CONF
_TRUE = ("true",)
_FALSE = ("false",)


def rule(name):
    """Declare the policy rule a handler needs (checked by
    ``controllers.base.dispatch`` before the handler runs, on the URL's
    project)."""

    def wrap(handler):
        handler.policy_rule = name
        return handler

    return wrap


# The "rule" of a route that takes no token (``no_token``): no policy is
# checked, the engine authenticates the request by what it carries.
NO_TOKEN = "(no token)"


def no_token(handler):
    """Declare a handler that runs without a token and without a policy
    check: the request carries its own credential, which the engine
    checks (a webhook's signature). ``auth`` must let its URL through
    (``auth.NO_TOKEN_ROUTES``)."""
    handler.policy_rule = NO_TOKEN
    return handler


def query(**params):
    """Declare the query parameters a handler reads: {name: JSON schema}.

    The OpenAPI document lists exactly these, and ``Request.params``
    refuses to read any other (a handler reading an undeclared parameter
    is a bug, found by any test that calls it).
    """

    def wrap(handler):
        handler.query_params = dict(
            getattr(handler, "query_params", {}), **params
        )
        return handler

    return wrap


class QueryParams:
    """The query string, readable only by the names a handler declared
    with ``query`` (iterating gives every name the client sent)."""

    def __init__(self, multidict, declared, handler_name):
        self._multidict = multidict
        self._declared = declared
        self._handler = handler_name

    def _check(self, name):
        if name not in self._declared:
            raise RuntimeError(
                "%s reads query parameter %r, which it does "
                "not declare" % (self._handler, name)
            )

    def get(self, name, default=None):
        self._check(name)
        return self._multidict.get(name, default)

    def getall(self, name):
        self._check(name)
        return self._multidict.getall(name)

    def items(self):
        return self._multidict.items()

    def __iter__(self):
        return iter(self._multidict)


class Reply:
    """A handler's answer: status, JSON body (or None) and headers."""

    def __init__(self, status, body=None, headers=None):
        self.status = status
        self.body = body
        self.headers = headers or {}


class Request:
    """A thin view of the webob request for handlers."""

    def __init__(self, webob_request, engine, handler=None):
        self.raw = webob_request
        self.engine = engine
        self.context = webob_request.environ.get(auth.ENV_KEY)
        self.params = QueryParams(
            webob_request.GET,
            getattr(handler, "query_params", {}),
            getattr(handler, "__name__", None),
        )

    @property
    def app_url(self):
        return self.raw.host_url + self.raw.script_name

    def authorize(self, rule_name, project_id):
        """:raises Forbidden: if policy denies ``rule_name``."""
        if rule_name is not NO_TOKEN:
            policy.authorize(self.context, rule_name, project_id)

    def list_param(self, name):
        """Values of a repeatable or comma-separated query parameter."""
        values = []
        for value in self.params.getall(name):
            values.extend(v.strip() for v in value.split(",") if v.strip())
        return values

    def sort_dir(self):
        value = self.params.get("sort_dir")
        if value not in (None, "asc", "desc"):
            raise exception.Invalid(
                message="Invalid sort direction %s, "
                "must be asc or desc" % value
            )
        return value

    def action(self, allowed, value=False):
        """The one action a ``.../actions`` body names (``{"name": ...}``)
        (with ``value``: and what the body gives it, as a pair).

        :raises BadRequest: for none, several, or one not in ``allowed``
            (Heat's messages).
        """
        body = self.body()
        if len(body) != 1:
            raise exception.BadRequest(
                message="Multiple actions specified"
                if body
                else "No action specified"
            )
        action = next(iter(body))
        if action not in allowed:
            raise exception.BadRequest(
                message="Invalid action %s specified" % action
            )
        return (action, body[action]) if value else action

    def body(self, any_json=False):
        """The JSON body as a dict ({} when empty).

        The size limit holds on the bytes read: at most one byte more
        than ``max_json_body_size`` is read, whatever Content-Length (or
        chunked encoding) says.

        :param any_json: accept any JSON document (None when empty).

        :raises RequestTooLarge: above ``max_json_body_size``.
        :raises BadRequest: if the body is not a UTF-8 JSON object, is
            nested too deeply, or did not arrive in full.
        """
        raw = self._read_body(CONF.max_json_body_size)
        if not raw.strip():
            return None if any_json else {}
        try:
            # A template or an environment is one level down.
            body = template_format.loads_json(
                raw, template_format.MAX_DEPTH + 2
            )
        except ValueError as exc:
            raise exception.BadRequest(
                message="The request body is not valid JSON: %s" % exc
            ) from None
        if not isinstance(body, dict) and not any_json:
            raise exception.BadRequest(
                message="The request body must be a JSON object."
            )
        return body

    def raw_body(self, limit):
        """The body's bytes as sent, at most ``limit`` of them (at most
        one byte more is read).

        :raises RequestTooLarge: above ``limit``.
        :raises BadRequest: if it did not arrive in full.
        """
        return self._read_body(limit, "Request body")

    def _read_body(self, limit, what="JSON body"):
        length = self.raw.content_length or 0
        if length > limit:
            self._close_connection()
            raise _too_large(length, limit, what)
        try:
            raw = self.raw.body_file_raw.read(limit + 1)
        except OSError:
            # The client went away or stalled past the socket timeout:
            # nothing to answer, nothing worth a traceback.
            self._close_connection()
            raise exception.BadRequest(
                message="The request body was not received in full."
            ) from None
        if len(raw) > limit:
            self._close_connection()
            raise _too_large(None, limit, what)
        return raw

    def _close_connection(self):
        """The rest of the body stays unread: the answer closes the
        connection (see ``faults.FaultWrapper``)."""
        self.raw.environ[faults.CLOSE_CONNECTION] = True

    def bool_param(self, name, default=False):
        value = self.params.get(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise exception.Invalid(
            message='Unrecognized value "%s" for "%s", '
            "acceptable values are: true, false." % (value, name)
        )

    def int_param(self, name, minimum=0):
        value = self.params.get(name)
        if value is None:
            return None
        try:
            number = int(value)
            if number > 2**31:
                raise ValueError(value)
        except ValueError:
            raise exception.Invalid(
                message="%s must be an integer" % name
            ) from None
        if number < minimum:
            raise exception.Invalid(
                message="%s must be >= %d" % (name, minimum)
            )
        return number


def _too_large(length, limit, what):
    return exception.RequestTooLarge(
        message="%s size (%s bytes) exceeds maximum allowed size "
        "(%d bytes)."
        % (what, "more than %d" % limit if length is None else length, limit)
    )


def to_response(reply):
    response = webob.Response(
        status=reply.status, content_type="application/json", charset="UTF-8"
    )
    if reply.body is not None or reply.status not in (204, 302):
        response.body = faults.dumps(reply.body)
    for key, value in reply.headers.items():
        response.headers[key] = value
    return response


def conditional(response, webob_request):
    """An ETag on a GET's answer, and 304 when the client already has it.

    Pollers (the dashboard, ``--wait`` loops) that send ``If-None-Match``
    get an empty 304 while nothing changed: less to send and to parse.
    ``no-cache`` makes browsers revalidate every time, so what they show
    is never older than the last request.
    """
    if webob_request.method != "GET" or response.status_int != 200:
        return response
    etag = hashlib.sha256(response.body).hexdigest()[:32]
    response.etag = etag
    response.cache_control = "private, no-cache"
    if etag in webob_request.if_none_match:
        response.status = 304
        response.body = b""
    return response
