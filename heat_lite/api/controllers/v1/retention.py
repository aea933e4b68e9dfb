"""Handlers of /v1/{tenant}/retention: the project's default image
retention, for its apps without a ``retention`` of their own
(doc/specs/image_retention.md; ``engine.fleet.retention``)."""

from heat_lite.api.request import Reply, rule
from heat_lite.common import exception


@rule("retention:show")
def show_retention(req, tenant):
    """Show the project's default retention, the deployment's options
    and the policy an app without its own gets."""
    return Reply(200, {"retention": req.engine.show_retention(req.context)})


@rule("retention:update")
def set_retention(req, tenant):
    """``{"retention": {"keep_last": .., "grace": .., "mode": ..}}`` (any
    of them): replace the project's default."""
    body = req.body()
    if set(body) != {"retention"}:
        raise exception.BadRequest(
            message='The body must be {"retention": {...}} and no more'
        )
    shown = req.engine.set_retention(req.context, body.get("retention"))
    return Reply(200, {"retention": shown})


@rule("retention:update")
def delete_retention(req, tenant):
    """Unset the project's default: its apps follow the options."""
    req.engine.delete_retention(req.context)
    return Reply(204)
