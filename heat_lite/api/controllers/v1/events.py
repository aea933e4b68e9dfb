"""Handlers of events: a stack's, a resource's, and one event."""

from heat_lite.api import schemas, views
from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

FILTERS = (
    "resource_status",
    "resource_action",
    "resource_name",
    "resource_type",
)
SORT_KEYS = ("event_time", "resource_type")
_QUERY = dict(
    schemas.Q_PAGE,
    sort_dir=schemas.Q_SORT_DIR,
    sort_keys=schemas.STRING,
    nested_depth=schemas.Q_INT,
    **{k: schemas.STRING for k in FILTERS},
)


def _events(req, tenant, name, stack_id, resource=None):
    filters = {}
    for key in FILTERS:
        values = req.params.getall(key)
        if values:
            filters[key] = values
    sort_keys = [k for k in req.list_param("sort_keys") if k in SORT_KEYS]
    params = {
        "limit": req.int_param("limit"),
        "marker": req.params.get("marker"),
        "sort_dir": req.sort_dir(),
        "sort_keys": sort_keys,
        "filters": filters,
        "nested_depth": req.int_param("nested_depth"),
    }
    events = req.engine.list_events(
        req.context,
        identity(tenant, name, stack_id),
        resource_name=resource,
        **params,
    )
    return [views.event(req.app_url, e) for e in events]


@rule("events:index")
@query(**_QUERY)
def list_events(req, tenant, name, stack_id):
    """List the stack's events (``nested_depth``, filters)."""
    return Reply(200, {"events": _events(req, tenant, name, stack_id)})


@rule("events:index")
@query(**_QUERY)
def list_resource_events(req, tenant, name, stack_id, resource):
    """List a resource's events."""
    events = _events(req, tenant, name, stack_id, resource)
    if not events and not req.params.get("marker"):
        raise exception.NotFound(
            message="No events found for resource %s" % resource
        )
    return Reply(200, {"events": events})


@rule("events:show")
def show_event(req, tenant, name, stack_id, resource, event_id):
    """Show one event."""
    event = req.engine.show_event(
        req.context, identity(tenant, name, stack_id), resource, event_id
    )
    return Reply(200, {"event": views.event(req.app_url, event, detail=True)})
