"""Handlers of /v1/{tenant}/images: heat_lite's view of the images it
built for the project's apps, each with why it is kept, and the dry run
of the next retention pass; and /v1/{tenant}/apps/{app}/image_events,
what retention did to an app's images (doc/specs/image_retention.md;
``engine.fleet.retention``)."""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import states

STATE = {"type": "string", "enum": list(states.IMAGE)}


@rule("images:index")
@query(
    **schemas.Q_PAGE,
    app={"type": "string"},
    state=STATE,
    unused={"type": "boolean"},
)
def list_images(req, tenant):
    """List the images heat_lite built for the project, newest first."""
    images = req.engine.list_images(
        req.context,
        app=req.params.get("app"),
        state=req.params.get("state"),
        unused=req.bool_param("unused"),
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"images": images})


@rule("images:show")
def show_image(req, tenant, image_id):
    """Show an image and what keeps it (or when it goes)."""
    return Reply(200, {"image": req.engine.show_image(req.context, image_id)})


@rule("images:dry_run")
def image_action(req, tenant):
    """``{"dry_run": null}``: what the next retention pass would do."""
    req.action(("dry_run",))
    return Reply(200, {"decided": req.engine.images_dry_run(req.context)})


@rule("apps:image_events")
@query(limit=schemas.Q_INT, marker=schemas.Q_INT)
def list_app_image_events(req, tenant, app):
    """What retention did to the app's images (hidden, deleted, revived,
    delete_failed), newest first; ``marker`` is the id of the last event
    of the page before."""
    events = req.engine.list_app_image_events(
        req.context,
        app,
        limit=req.int_param("limit"),
        marker=req.int_param("marker"),
    )
    return Reply(200, {"image_events": events})
