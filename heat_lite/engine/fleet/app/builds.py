"""The RPC endpoint of an app's pushes and builds (on the ``[engine]
topic``; doc/specs/apps.md): a git server's webhook delivery, an
authenticated push, and the builds they make (list, show, log, cancel).

A delivery is authenticated here, against the app's secret decrypted for
the check and never kept (``common.crypt``, ``apps.webhook``): a forged
one, or one for an app that does not exist or has no secret, is refused
with the same 401 after the same work (an HMAC under a random key stands
in for a missing secret), so the answer does not reveal which apps
exist. Nothing is stored before a delivery is authenticated and read; a
replayed delivery id is refused by the database (409). A stored build
wakes the builder workers (a cast; a lost one only delays the build
until their next look at the queue).
"""

import base64
import binascii
import logging
import secrets
import uuid

import oslo_messaging as messaging

from heat_lite import conf
from heat_lite.apps import webhook as hooks
from heat_lite.common import app_spec, crypt, exception
from heat_lite.common.states import BuildStatus
from heat_lite.db import apps as db_apps
from heat_lite.db import builds as db_builds
from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint.base import expected
from heat_lite.engine.endpoint.views import timestamp
from heat_lite.engine.fleet.app import endpoint as app_endpoint

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# How much of the log's end a build's show carries (characters).
LOG_TAIL = 4096
LOG_PAGE = 65536


def _app_secret(tenant, app):
    """(the app row or None, its secret or a random stand-in)."""
    try:
        row = db_apps.app_get(tenant, app)
    except exception.AppNotFound:
        row = None
    if row is None or row["webhook_secret"] is None:
        return row, secrets.token_hex(32)
    return row, crypt.decrypt(row["webhook_secret"])


def _raw(body):
    try:
        return base64.b64decode(body.encode("ascii"), validate=True)
    except (AttributeError, UnicodeEncodeError, binascii.Error):
        raise hooks.WebhookMalformed(reason="the body is not base64") from None


def _statuses(status):
    statuses = [status] if isinstance(status, str) else list(status or ())
    unknown = [s for s in statuses if s not in BuildStatus]
    if unknown:
        raise exception.Invalid(
            message="status must be one of %s" % ", ".join(BuildStatus)
        )
    return statuses or None


class BuildEndpoint:
    """Pushes and builds requests from the API (or any RPC client).

    :param wake: called with the request context after a build is
        stored (default: a cast to the builder workers).
    """

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, wake=None):
        self._wake = wake or _WakeBuilders()

    @expected
    def app_webhook(self, ctxt, app, headers, body):
        if not isinstance(headers, dict) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            raise hooks.WebhookMalformed(reason="headers must be a map")
        raw = _raw(body)
        row, secret = _app_secret(ctxt.project_id, app)
        delivery = hooks.parse_delivery(
            headers, raw, secret, CONF.apps.max_webhook_size
        )
        if row is None or row["webhook_secret"] is None:
            # A random key matched: not in this universe, but be sure.
            raise hooks.WebhookUnauthenticated(reason="no signature or token")
        if isinstance(delivery, hooks.Ping):
            return {"ignored": "ping"}
        if isinstance(delivery, hooks.Ignored):
            return {"ignored": delivery.reason}
        return self._build(ctxt, row, delivery, "webhook")

    @expected
    def app_push(self, ctxt, app, ref, commit, delivery_id=None):
        row = db_apps.app_get(ctxt.project_id, app)
        if delivery_id is not None:
            hooks.check_delivery_id(delivery_id, "Idempotency-Key")
        push = hooks.push_from_request(
            ref, commit, delivery_id, pusher=ctxt.user_id
        )
        return self._build(ctxt, row, push, "push")

    def _build(self, ctxt, row, push, source):
        branches = row["spec"]["source"]["branches"]
        if not app_spec.follows(branches, push.branch):
            return {"ignored": "branch %s is not followed" % push.branch}
        build = db_builds.build_create(
            {
                "id": str(uuid.uuid4()),
                "app_id": row["id"],
                "tenant": row["tenant"],
                "branch": push.branch,
                "ref": push.ref,
                "commit": push.commit,
                "source": source,
                "delivery_id": push.delivery_id,
                "builder": row["spec"]["builder"]["name"],
            }
        )
        try:
            self._wake(ctxt)
        except messaging.MessagingException:
            LOG.warning(
                "Build %s is queued, but the builder workers could not be "
                "told: it starts at their next look at the queue",
                build["id"],
            )
        return {"build": view(build, row)}

    @expected
    def list_builds(
        self, ctxt, app, branch=None, status=None, limit=None, marker=None
    ):
        row = db_apps.app_get(ctxt.project_id, app)
        builds = db_builds.build_list(
            ctxt.project_id,
            row["id"],
            branch=branch,
            status=_statuses(status),
            limit=app_endpoint.check_limit(limit),
            marker=marker,
        )
        return [view(b, row) for b in builds]

    @expected
    def show_build(self, ctxt, app, build):
        row = db_apps.app_get(ctxt.project_id, app)
        found = db_builds.build_get(ctxt.project_id, row["id"], build)
        return view(found, row, log_tail=_log_tail(found["id"]))

    @expected
    def build_log(self, ctxt, app, build, offset=0):
        if type(offset) is not int or offset < 0:
            raise exception.Invalid(message="offset must be an integer >= 0")
        row = db_apps.app_get(ctxt.project_id, app)
        found = db_builds.build_get(ctxt.project_id, row["id"], build)
        text, next_offset = db_builds.build_log_read(
            found["id"], offset=offset, limit=LOG_PAGE
        )
        return {"log": text, "next_offset": next_offset}

    @expected
    def cancel_build(self, ctxt, app, build):
        row = db_apps.app_get(ctxt.project_id, app)
        found = db_builds.build_cancel(ctxt.project_id, row["id"], build)
        return view(found, row)


class _WakeBuilders:
    """WAKE BUILDERS: tell the builder workers a build is queued, by the
    cast ``engine.fleet.app.builder_rpcapi.BuildWorkerAPI().wake(ctxt)``
    (the builder topic's client, issue 29.3, from the builds' branch).

    Imported at the first wake, so that this endpoint works before that
    client is merged: until then nothing is sent and a queued build
    waits for the builder workers' own look at the queue. Once both are
    merged, the import can move to the top of the module.
    """

    def __init__(self):
        self._api = None

    def __call__(self, ctxt):
        if self._api is None:
            try:
                from heat_lite.engine.fleet.app import builder_rpcapi
            except ImportError:
                return
            self._api = builder_rpcapi.BuildWorkerAPI()
        self._api.wake(ctxt)


def _log_tail(build_id):
    return db_builds.build_log_tail(build_id, LOG_TAIL)


def view(build, app_row, log_tail=None):
    """The API's build dict: the push, and what became of it as far as
    it went (builder, image, template, stack, traversal, verification);
    ``log_tail`` in a build's show."""
    result = {
        "id": build["id"],
        "app_id": build["app_id"],
        "app_name": app_row["name"],
        "project": build["tenant"],
        "branch": build["branch"],
        "ref": build["ref"],
        "commit": build["commit"],
        "source": build["source"],
        "delivery_id": build["delivery_id"],
        "status": build["status"],
        "status_reason": build["status_reason"],
        "cancel_requested": bool(build["cancel_requested"]),
        "builder": build["builder"],
        "image_id": build["image_id"],
        "template_id": build["template_id"],
        "stack_id": build["stack_id"],
        "stack_name": app_spec.stack_name(
            app_row["name"], build["branch"], app_row["spec"]["stacks"]
        ),
        "traversal": build["traversal"],
        "verification": build["verification"],
        "created_at": timestamp(build["created_at"]),
        "updated_at": timestamp(build["updated_at"]),
        "started_at": timestamp(build["started_at"]),
        "finished_at": timestamp(build["finished_at"]),
    }
    if log_tail is not None:
        result["log_tail"] = log_tail
    return result
