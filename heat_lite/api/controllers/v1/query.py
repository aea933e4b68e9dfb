"""Handler of /v1/{tenant}/stacks/query: the stacks a selector matches
(names, tags, parameters, resources' properties, status; see
``engine.endpoint.queries``)."""

from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.request import Reply, rule
from heat_lite.common import exception


@rule("stacks:query")
def query_stacks(req, tenant):
    """Find the stacks matching a selector, with the values that matched."""
    body = req.body()
    stack_body.check_keys(body, ("selector", "all_projects"))
    selector = body.get("selector")
    if not isinstance(selector, dict):
        raise exception.InvalidSelector(reason="selector must be a map")
    all_projects = body.get("all_projects", False)
    if not isinstance(all_projects, bool):
        raise exception.Invalid(message="all_projects must be a boolean")
    if all_projects:
        req.authorize("stacks:query_all_projects", tenant)
    stacks = req.engine.query_stacks(
        req.context, selector, all_projects=all_projects
    )
    return Reply(200, {"stacks": stacks})
