"""Handlers of a stack's resources and events."""

from heat_lite.api import views
from heat_lite.api.controllers.v1.stacks import _identity
from heat_lite.api.request import Reply
from heat_lite.common import exception


def list_resources(req, tenant, name, stack_id):
    resources = req.engine.list_stack_resources(
        req.context, _identity(tenant, name, stack_id))
    return Reply(200, {"resources": [views.resource(req.app_url, r)
                                     for r in resources]})


def show_resource(req, tenant, name, stack_id, resource):
    item = req.engine.describe_stack_resource(
        req.context, _identity(tenant, name, stack_id), resource,
        with_attr=req.params.getall("with_attr") or None)
    return Reply(200, {"resource": views.resource(req.app_url, item)})


def resource_versions(req, tenant, name, stack_id, resource):
    versions = req.engine.resource_versions(
        req.context, _identity(tenant, name, stack_id), resource)
    return Reply(200, {"versions": versions})


_EVENT_FILTERS = ("resource_status", "resource_action", "resource_name",
                  "resource_type")


def _events(req, tenant, name, stack_id, resource=None):
    filters = {}
    for key in _EVENT_FILTERS:
        values = req.params.getall(key)
        if values:
            filters[key] = values
    sort_dir = req.params.get("sort_dir")
    if sort_dir not in (None, "asc", "desc"):
        raise exception.Invalid(message="Invalid sort direction %s" %
                                sort_dir)
    return req.engine.list_events(
        req.context, _identity(tenant, name, stack_id),
        resource_name=resource, limit=req.int_param("limit"),
        marker=req.params.get("marker"), sort_dir=sort_dir,
        filters=filters)


def list_events(req, tenant, name, stack_id):
    events = _events(req, tenant, name, stack_id)
    return Reply(200, {"events": [views.event(req.app_url, e)
                                  for e in events]})


def list_resource_events(req, tenant, name, stack_id, resource):
    events = _events(req, tenant, name, stack_id, resource)
    if not events and not req.params.get("marker"):
        raise exception.NotFound(message="No events found for resource %s"
                                 % resource)
    return Reply(200, {"events": [views.event(req.app_url, e)
                                  for e in events]})
