"""Handler of /v1/{tenant}/references: how many stacks still use each
value of a resource property (``engine.endpoint.references``)."""

from heat_lite.api import schemas
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception


@rule("references:index")
@query(
    type=schemas.STRING, property=schemas.STRING, all_projects=schemas.Q_BOOL
)
def list_references(req, tenant):
    """Count the stacks using each value of a property, current vs retained."""
    type_name = req.params.get("type")
    prop = req.params.get("property")
    if not type_name or not prop:
        raise exception.Invalid(
            message="the query parameters type and property are required"
        )
    all_projects = req.bool_param("all_projects")
    if all_projects:
        req.authorize("references:all_projects", tenant)
    found = req.engine.list_references(
        req.context, type_name, prop, all_projects=all_projects
    )
    return Reply(200, {"references": found})
