"""What a handler gets: the parsed request, its context and the engine."""

import json

import webob

from heat_lite import conf
from heat_lite.api import auth
from heat_lite.common import exception, policy

CONF = conf.CONF
_TRUE = ("true",)
_FALSE = ("false",)


def rule(name):
    """Declare the policy rule a handler needs (checked by the router's
    dispatcher before the handler runs, on the URL's project)."""

    def wrap(handler):
        handler.policy_rule = name
        return handler

    return wrap


class Reply:
    """A handler's answer: status, JSON body (or None) and headers."""

    def __init__(self, status, body=None, headers=None):
        self.status = status
        self.body = body
        self.headers = headers or {}


class Request:
    """A thin view of the webob request for handlers."""

    def __init__(self, webob_request, engine):
        self.raw = webob_request
        self.engine = engine
        self.context = webob_request.environ.get(auth.ENV_KEY)
        self.params = webob_request.GET

    @property
    def app_url(self):
        return self.raw.host_url + self.raw.script_name

    def authorize(self, rule_name, project_id):
        """:raises Forbidden: if policy denies ``rule_name``."""
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

    def body(self, any_json=False):
        """The JSON body as a dict ({} when empty).

        :param any_json: accept any JSON document (None when empty).

        :raises RequestTooLarge: above ``max_json_body_size``.
        :raises BadRequest: if the body is not a JSON object.
        """
        length = self.raw.content_length or 0
        if length > CONF.max_json_body_size:
            raise exception.RequestTooLarge(
                message="JSON body size (%d bytes) exceeds maximum allowed "
                "size (%d bytes)." % (length, CONF.max_json_body_size)
            )
        raw = self.raw.body
        if len(raw) > CONF.max_json_body_size:
            raise exception.RequestTooLarge(
                message="JSON body size exceeds maximum allowed size "
                "(%d bytes)." % CONF.max_json_body_size
            )
        if not raw.strip():
            return None if any_json else {}
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise exception.BadRequest(
                message="The request body is not valid JSON."
            ) from None
        if not isinstance(body, dict) and not any_json:
            raise exception.BadRequest(
                message="The request body must be a JSON object."
            )
        return body

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


def to_response(reply):
    response = webob.Response(
        status=reply.status, content_type="application/json", charset="UTF-8"
    )
    if reply.body is not None or reply.status not in (204, 302):
        response.body = json.dumps(reply.body).encode()
    for key, value in reply.headers.items():
        response.headers[key] = value
    return response
