"""Handlers of /build_info and /services (admin)."""

from heat_lite import version
from heat_lite.api.request import Reply, rule


@rule("build_info:build_info")
def build_info(req, tenant):
    """The API's and the engine's versions."""
    return Reply(
        200,
        {
            "api": {"revision": version.version_string()},
            "engine": {"revision": req.engine.get_revision(req.context)},
        },
    )


@rule("service:index")
def list_services(req, tenant):
    """List the engine services, up or down."""
    return Reply(200, {"services": req.engine.list_services(req.context)})
