"""Handlers of a stack's resources: list, show, metadata, signal, mark
(un)healthy and our ``/versions`` extension."""

from heat_lite.api import schemas, views
from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

FILTERS = ("name", "status", "action", "type", "id", "physical_resource_id")
_LIST_PARAMS = ("nested_depth", "with_detail")
_MARK_KEYS = ("mark_unhealthy", "resource_status_reason")


@rule("resource:index")
@query(
    nested_depth=schemas.Q_INT,
    with_detail=schemas.Q_BOOL,
    **{k: schemas.STRING for k in FILTERS},
)
def list_resources(req, tenant, name, stack_id):
    """List the stack's resources (``nested_depth``, filters)."""
    filters = {}
    for key in req.params:
        if key in _LIST_PARAMS:
            continue
        if key not in FILTERS:
            raise exception.Invalid(
                message="Invalid filter parameters %s" % key
            )
        filters[key] = req.params.getall(key)
    resources = req.engine.list_stack_resources(
        req.context,
        identity(tenant, name, stack_id),
        nested_depth=req.int_param("nested_depth") or 0,
        with_detail=req.bool_param("with_detail"),
        filters=filters or None,
    )
    return Reply(
        200, {"resources": [views.resource(req.app_url, r) for r in resources]}
    )


@rule("resource:show")
@query(with_attr=schemas.STRING)
def show_resource(req, tenant, name, stack_id, resource):
    """Show a resource with its attributes."""
    item = req.engine.describe_stack_resource(
        req.context,
        identity(tenant, name, stack_id),
        resource,
        with_attr=req.params.getall("with_attr") or None,
    )
    return Reply(200, {"resource": views.resource(req.app_url, item)})


@rule("resource:metadata")
def metadata(req, tenant, name, stack_id, resource):
    """The resource's metadata."""
    return Reply(
        200,
        {
            "metadata": req.engine.resource_metadata(
                req.context, identity(tenant, name, stack_id), resource
            )
        },
    )


@rule("resource:signal")
def signal(req, tenant, name, stack_id, resource):
    """Signal a resource (a wait condition handle's status and data)."""
    details = req.body(any_json=True)
    req.engine.resource_signal(
        req.context, identity(tenant, name, stack_id), resource, details
    )
    return Reply(200, None)


@rule("resource:mark_unhealthy")
def mark_unhealthy(req, tenant, name, stack_id, resource):
    """Mark a resource unhealthy (CHECK_FAILED), or healthy again."""
    body = req.body()
    unknown = sorted(set(body) - set(_MARK_KEYS))
    if unknown:
        raise exception.Invalid(
            message="Invalid keys in resource mark "
            "unhealthy %s" % ", ".join(unknown)
        )
    if "mark_unhealthy" not in body:
        raise exception.Invalid(
            message="Missing mandatory "
            "(mark_unhealthy) key from mark unhealthy "
            "request"
        )
    mark = body["mark_unhealthy"]
    if isinstance(mark, str) and mark.lower() in ("true", "false"):
        mark = mark.lower() == "true"
    if not isinstance(mark, bool):
        raise exception.Invalid(
            message='Unrecognized value "%s" for '
            '"mark_unhealthy", acceptable values are: '
            "true, false." % (mark,)
        )
    reason = body.get("resource_status_reason")
    if reason is not None and not isinstance(reason, str):
        raise exception.Invalid(
            message="resource_status_reason must be a string"
        )
    req.engine.resource_mark_unhealthy(
        req.context, identity(tenant, name, stack_id), resource, mark, reason
    )
    return Reply(200, None)


@rule("resource:show")
def resource_versions(req, tenant, name, stack_id, resource):
    """List every stored version of a resource, history too."""
    versions = req.engine.resource_versions(
        req.context, identity(tenant, name, stack_id), resource
    )
    return Reply(200, {"versions": versions})
