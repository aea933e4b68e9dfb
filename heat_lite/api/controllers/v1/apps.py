"""Handlers of /v1/{tenant}/apps: create, list, show, update and delete
of the project's apps (doc/specs/apps.md; ``engine.fleet.app``).

The body is checked by the engine (``common.app_spec``): an update is
the stored app with the body laid over it, checked as a whole.
"""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import app_spec

SORT_KEY = {"type": "string", "enum": list(app_spec.SORT_KEYS)}


@rule("apps:create")
def create_app(req, tenant):
    """Create an app: a git source, a builder, a template per branch."""
    app = req.engine.create_app(req.context, req.body())
    return Reply(201, {"app": app})


@rule("apps:index")
@query(**schemas.Q_PAGE, sort_key=SORT_KEY, sort_dir=schemas.Q_SORT_DIR)
def list_apps(req, tenant):
    """List the project's apps, newest first unless sorted otherwise."""
    apps = req.engine.list_apps(
        req.context,
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
        sort_key=req.params.get("sort_key"),
        sort_dir=req.sort_dir(),
    )
    return Reply(200, {"apps": apps})


@rule("apps:show")
def show_app(req, tenant, app):
    """Show an app (by id or name), its template included."""
    return Reply(200, {"app": req.engine.show_app(req.context, app)})


@rule("apps:update")
def update_app(req, tenant, app):
    """Change some of an app's keys; the result is checked whole."""
    found = req.engine.update_app(req.context, app, req.body())
    return Reply(200, {"app": found})


@rule("apps:delete")
def delete_app(req, tenant, app):
    """Delete an app (its stacks stay)."""
    req.engine.delete_app(req.context, app)
    return Reply(204)
