"""Handlers of /software_deployments: list, create, show, update,
delete, and a server's deployment metadata."""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

# What a create or an update takes from the body (the rest is ignored,
# as Heat ignores it).
CREATE_KEYS = tuple(
    schemas.REQUESTS["create_software_deployment"]["properties"]
)
UPDATE_KEYS = tuple(
    schemas.REQUESTS["update_software_deployment"]["properties"]
)


def _body(req):
    body = req.body()
    if not isinstance(body, dict):
        raise exception.Invalid(message="The request body must be a map")
    return body


@rule("software_deployments:index")
@query(server_id={"type": "string"})
def list_software_deployments(req, tenant):
    """List the deployments the project sees (``server_id`` filters)."""
    deployments = req.engine.list_software_deployments(
        req.context, server_id=req.params.get("server_id")
    )
    return Reply(200, {"software_deployments": deployments})


@rule("software_deployments:create")
def create_software_deployment(req, tenant):
    """Create a software deployment."""
    body = _body(req)
    deployment = req.engine.create_software_deployment(
        req.context, **{key: body.get(key) for key in CREATE_KEYS}
    )
    return Reply(200, {"software_deployment": deployment})


@rule("software_deployments:show")
def show_software_deployment(req, tenant, deployment_id):
    """Show a software deployment."""
    deployment = req.engine.show_software_deployment(
        req.context, deployment_id
    )
    return Reply(200, {"software_deployment": deployment})


@rule("software_deployments:update")
def update_software_deployment(req, tenant, deployment_id):
    """Record a deployment's progress: what the body gives (not null)."""
    body = _body(req)
    deployment = req.engine.update_software_deployment(
        req.context,
        deployment_id,
        **{k: body[k] for k in UPDATE_KEYS if body.get(k) is not None},
    )
    return Reply(200, {"software_deployment": deployment})


@rule("software_deployments:delete")
def delete_software_deployment(req, tenant, deployment_id):
    """Delete a software deployment."""
    req.engine.delete_software_deployment(req.context, deployment_id)
    return Reply(204)


@rule("software_deployments:metadata")
def metadata_software_deployments(req, tenant, server_id):
    """The configs of the server's deployments, ordered by config name."""
    metadata = req.engine.metadata_software_deployments(req.context, server_id)
    return Reply(200, {"metadata": metadata})
