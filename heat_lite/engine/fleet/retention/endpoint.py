"""The images' RPC endpoint (on the ``[engine] topic``): heat_lite's view
of the images it built, in the caller's project only, each with why it
is kept (``db.image_needs.needed``) or since when it is unneeded and when
it goes; and the dry run of the next retention pass for the project.
"""

import datetime

import oslo_messaging as messaging

from heat_lite.common import app_spec, exception
from heat_lite.common import states as st
from heat_lite.db import apps as db_apps
from heat_lite.db import image_events, image_needs, managed_images
from heat_lite.db import retention_defaults as db_defaults
from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint.base import expected
from heat_lite.engine.endpoint.views import timestamp
from heat_lite.engine.fleet.app.endpoint import check_limit
from heat_lite.engine.fleet.retention import sweep

# The image events of an app a request without a limit gets.
EVENTS_PAGE = 100


def _goes_at(row, policy):
    """When the pass will delete it (None: not scheduled)."""
    if row["state"] == st.IMAGE.DELETING:
        return row["unneeded_at"] or row["hidden_at"]
    if row["state"] != st.IMAGE.HIDDEN or policy["mode"] != "delete":
        return None
    if row["hidden_at"] is None:
        return None
    return row["hidden_at"] + datetime.timedelta(seconds=policy["grace"])


def view(row, kept_by, policy):
    return {
        "id": row["id"],
        "name": row["name"],
        "project": row["tenant"],
        "app_id": row["app_id"],
        "branch": row["branch"],
        "build_id": row["build_id"],
        "state": row["state"],
        "kept_by": kept_by,
        "retention": policy,
        "created_at": timestamp(row["created_at"]),
        "deployed_at": timestamp(row["deployed_at"]),
        "unneeded_at": timestamp(row["unneeded_at"]),
        "hidden_at": timestamp(row["hidden_at"]),
        "deleted_at": timestamp(row["deleted_at"]),
        "goes_at": timestamp(_goes_at(row, policy)),
        "last_error": row["last_error"],
    }


def event_view(event):
    return {
        "id": event["id"],
        "image_id": event["image_id"],
        "app_id": event["app_id"],
        "action": event["action"],
        "reason": event["reason"],
        "created_at": timestamp(event["created_at"]),
    }


def _views(tenant, rows):
    apps = sweep.Apps(
        lambda app_id: tenant, db_defaults.retention_defaults(tenant)
    )
    why = image_needs.needed([r["id"] for r in rows], apps.keep_last)
    return [view(r, why[r["id"]], apps.policy(r["app_id"])) for r in rows]


def _invalid_retention(reason):
    return exception.Invalid(message="Invalid retention: %s" % reason)


def retention_view(tenant):
    """The project's default retention: what it set itself
    (``project_default``, {} if nothing), the ``[retention]`` options,
    and what an app of the project without a ``retention`` of its own
    gets (``effective``: key by key, the project's, else the option)."""
    try:
        row = db_defaults.retention_default_get(tenant)
    except exception.RetentionDefaultNotFound:
        row = {"retention": {}, "updated_at": None}
    return {
        "project": tenant,
        "project_default": row["retention"],
        "options": app_spec.retention({}),
        "effective": app_spec.retention({}, row["retention"]),
        "updated_at": timestamp(row["updated_at"]),
    }


class ImageEndpoint:
    """Image requests from the API (or any RPC client)."""

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    @expected
    def list_images(
        self,
        ctxt,
        app=None,
        state=None,
        unused=False,
        limit=None,
        marker=None,
    ):
        if state is not None and state not in st.IMAGE:
            raise exception.Invalid(
                message="state must be one of %s" % ", ".join(st.IMAGE)
            )
        app_id = db_apps.app_get(ctxt.project_id, app)["id"] if app else None
        rows = managed_images.image_list(
            ctxt.project_id,
            app_id=app_id,
            state=state,
            unused=bool(unused),
            limit=check_limit(limit),
            marker=marker,
        )
        return _views(ctxt.project_id, rows)

    @expected
    def show_image(self, ctxt, image_id):
        row = managed_images.image_get(ctxt.project_id, image_id)
        shown = _views(ctxt.project_id, [row])[0]
        shown["events"] = [
            event_view(e)
            for e in image_events.image_events(ctxt.project_id, image_id)
        ]
        return shown

    @expected
    def list_app_image_events(self, ctxt, app, limit=None, marker=None):
        """What retention did to the images of the caller's app ``app``
        (id or name): hidden, deleted, revived, delete_failed; newest
        first, a page of ``limit`` after event id ``marker``.

        :raises AppNotFound: (404) for an app of another project too.
        :raises Invalid: (400) for a limit out of range.
        """
        limit = check_limit(limit)
        if marker is not None and (type(marker) is not int or marker < 0):
            raise exception.Invalid(
                message="marker must be an image event's id"
            )
        app_id = db_apps.app_get(ctxt.project_id, app)["id"]
        return [
            event_view(e)
            for e in image_events.image_events(
                ctxt.project_id,
                app_id=app_id,
                limit=EVENTS_PAGE if limit is None else limit,
                marker=marker,
            )
        ]

    @expected
    def images_dry_run(self, ctxt):
        """What the next pass would do to the project's images; nothing
        is changed (the image service is not asked)."""
        decided = sweep.Sweep(store=None).run(
            dry_run=True, tenant=ctxt.project_id
        )["decided"]
        return [
            {
                "id": step.image_id,
                "state": step.frm,
                "to": step.to,
                "call": step.call,
                "why": step.why,
            }
            for step in decided
        ]

    # 1.18 --------------------------------------------------------------
    @expected
    def show_retention(self, ctxt):
        """The caller's project's default retention (``retention_view``);
        a project that set none sees the options."""
        return retention_view(ctxt.project_id)

    @expected
    def set_retention(self, ctxt, retention):
        """Make ``retention`` (any of keep_last, grace, mode; what it
        leaves out follows the ``[retention]`` options) the project's
        whole default, replacing any before (idempotent).

        :raises Invalid: (400) as an app's ``retention`` would be, or for
            an empty map (unset the default with ``delete_retention``).
        """
        checked = app_spec.check_retention(retention, _invalid_retention)
        if not checked:
            raise _invalid_retention(
                "give any of %s (delete the default to unset it)"
                % ", ".join(app_spec.RETENTION_KEYS)
            )
        db_defaults.retention_default_set(ctxt.project_id, checked)
        return retention_view(ctxt.project_id)

    @expected
    def delete_retention(self, ctxt):
        """Unset the project's default: its apps follow the options.

        :raises RetentionDefaultNotFound: (404) if it set none.
        """
        db_defaults.retention_default_delete(ctxt.project_id)
