"""Handlers of /software_configs: create, list, show and delete."""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

BODY_KEYS = ("name", "group", "config", "inputs", "outputs", "options")


@rule("software_configs:index")
@query(**schemas.Q_PAGE)
def list_software_configs(req, tenant):
    """List the project's software configs."""
    configs = req.engine.list_software_configs(
        req.context,
        limit=req.int_param("limit"),
        marker=req.params.get("marker"),
    )
    return Reply(200, {"software_configs": configs})


@rule("software_configs:create")
def create_software_config(req, tenant):
    """Create a software config."""
    body = req.body()
    for key in ("name", "group"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise exception.Invalid(message="%s must be a string" % key)
    config = req.engine.create_software_config(
        req.context, **{key: body.get(key) for key in BODY_KEYS}
    )
    return Reply(200, {"software_config": config})


@rule("software_configs:show")
def show_software_config(req, tenant, config_id):
    """Show a software config."""
    return Reply(
        200,
        {
            "software_config": req.engine.show_software_config(
                req.context, config_id
            )
        },
    )


@rule("software_configs:delete")
def delete_software_config(req, tenant, config_id):
    """Delete a software config."""
    req.engine.delete_software_config(req.context, config_id)
    return Reply(204)
