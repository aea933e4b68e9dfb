"""Handlers of an app's pushes and builds (doc/specs/apps.md): the
webhook git servers post to, the authenticated push of a git hook or a
CI job, and the builds they make (list, show, log, cancel).

The webhook takes no token (``request.no_token``): the delivery's
signature is its credential, checked by the engine against the app's
secret (``apps.webhook``), which never leaves the engine. The API only
bounds what a delivery may cost before the engine is asked: a rate per
app URL (``ratelimit``), a credential header present at all, the body's
size. Every refusal is the same whether the app exists or not.
"""

import base64

from heat_lite import conf
from heat_lite.api import faults, ratelimit, schemas
from heat_lite.api.request import Reply, no_token, query, rule
from heat_lite.apps import webhook as hooks
from heat_lite.common import exception, states

CONF = conf.CONF
ACTIONS = ("cancel",)
# The Content-Type the client sent (``app._JSONOnly`` hides it from pecan).
_CONTENT_TYPE = "heat_lite.content_type"
_BUCKETS = {}


def _buckets():
    """This process's buckets for the current options (tests change them)."""
    key = (CONF.apps.webhook_rate, CONF.apps.webhook_burst)
    if key not in _BUCKETS:
        _BUCKETS.clear()
        _BUCKETS[key] = ratelimit.Buckets(*key)
    return _BUCKETS[key]


def _delivery_headers(req):
    """The headers ``apps.webhook`` reads, names lowercase."""
    found = {}
    for name in hooks.HEADERS:
        if name == "content-type":
            value = req.raw.environ.get(_CONTENT_TYPE)
        else:
            value = req.raw.headers.get(name)
        if value is not None:
            found[name] = value
    return found


def _refuse_unread(req, exc):
    """Answer ``exc`` without reading the body: the connection closes."""
    req.raw.environ[faults.CLOSE_CONNECTION] = True
    raise exc


@no_token
def webhook(req, tenant, app):
    """Take a git server's push delivery (signed, no token)."""
    wait = _buckets().take((tenant, app))
    if wait:
        _refuse_unread(
            req,
            exception.TooManyRequests(
                retry_after=wait,
                reason="this app's webhook takes at most %g deliveries "
                "a second" % CONF.apps.webhook_rate,
            ),
        )
    headers = _delivery_headers(req)
    if not hooks.has_credential(headers):
        _refuse_unread(
            req, hooks.WebhookUnauthenticated(reason="no signature or token")
        )
    body = req.raw_body(CONF.apps.max_webhook_size)
    result = req.engine.app_webhook(
        req.context, app, headers, base64.b64encode(body).decode("ascii")
    )
    return _pushed(result)


def _pushed(result):
    if "build" in result:
        return Reply(202, {"build": result["build"]})
    return Reply(200, {"ignored": result["ignored"]})


@rule("apps:push")
def push(req, tenant, app):
    """Push a branch's commit to the app: a build (as a webhook would)."""
    body = req.body()
    unknown = sorted(set(body) - {"ref", "commit"})
    if unknown or not {"ref", "commit"} <= set(body):
        raise exception.BadRequest(
            message='The body must be {"ref": ..., "commit": ...}'
        )
    result = req.engine.app_push(
        req.context,
        app,
        body["ref"],
        body["commit"],
        delivery_id=req.raw.headers.get("Idempotency-Key"),
    )
    return _pushed(result)


@rule("apps:builds")
@query(
    **schemas.Q_PAGE,
    branch=schemas.STRING,
    status={"type": "string", "enum": list(states.BuildStatus)},
)
def list_builds(req, tenant, app):
    """List the app's builds, newest first."""
    builds = req.engine.list_builds(
        req.context,
        app,
        branch=req.params.get("branch"),
        status=req.list_param("status") or None,
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"builds": builds})


@rule("apps:builds")
def show_build(req, tenant, app, build):
    """Show a build: its push, image, template, stack and verification."""
    found = req.engine.show_build(req.context, app, build)
    return Reply(200, {"build": found})


@rule("apps:build_log")
@query(offset=schemas.INTEGER)
def build_log(req, tenant, app, build):
    """Read a build's log from an offset (while it runs, too)."""
    log = req.engine.build_log(
        req.context, app, build, offset=req.int_param("offset") or 0
    )
    return Reply(200, log)


@rule("apps:cancel")
def build_action(req, tenant, app, build):
    """Cancel a build."""
    body = req.body()
    if len(body) != 1:
        raise exception.BadRequest(
            message="Multiple actions specified"
            if body
            else "No action specified"
        )
    action = next(iter(body))
    if action not in ACTIONS:
        raise exception.BadRequest(
            message="Invalid action %s specified" % action
        )
    found = req.engine.cancel_build(req.context, app, build)
    return Reply(200, {"build": found})
