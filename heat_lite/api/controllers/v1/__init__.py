"""The v1 route table: Heat's paths under /v1/{tenant}.

Order matters (first match wins): fixed words (``detail``, ``preview``,
an ARN) before a stack name, and the lookup of ``{name}/<sub-path>``
before ``{name}/{id}``. ``openapi.build`` turns this table into the
OpenAPI document.
"""

from heat_lite.api import router
from heat_lite.api.controllers.v1 import (
    changes,
    events,
    promotions,
    query,
    references,
    resources,
    rollouts,
    services,
    snapshots,
    software_configs,
    stack,
    stacks,
    templates,
)

# Paths that exist under a stack name as well as under name/id; any
# method there is redirected to the canonical URL (clients re-send).
LOOKUP_SUBS = (
    "resources",
    "events",
    "template",
    "actions",
    "environment",
    "files",
    "outputs",
    "snapshots",
    "export",
    "abandon",
    "preview",
    "verdict",
    "promotions",
)
_ALL = ("GET", "POST", "PUT", "PATCH", "DELETE")
# An ARN's slashes may arrive quoted (%2F): WSGI servers leave them so.
_SLASH = r"(?:/|%2[Ff])"
ARN = (
    r"arn:openstack:heat::(?P<arn_tenant>[^:/]*):stacks"
    + _SLASH
    + r"(?P<name>[^/%]+)"
    + _SLASH
    + r"(?P<stack_id>[^/%]+)(?P<sub>/.+)?"
)


def _stack_routes(r, base):
    r.add(base, GET=stacks.list_stacks, POST=stacks.create_stack)
    r.add(base + "/detail", GET=stacks.list_stacks_detail)
    r.add(base + "/preview", POST=stacks.preview_stack)
    r.add(base + "/query", POST=query.query_stacks)
    r.add(base + "/" + ARN, **{m: stacks.lookup_arn for m in _ALL})
    r.add(base + "/{name}", **{m: stacks.lookup for m in _ALL})
    r.add(
        base + "/{name}/(?P<sub>(?:%s)(?:/.+)?)" % "|".join(LOOKUP_SUBS),
        **{m: stacks.lookup for m in _ALL},
    )
    one = base + "/{name}/{stack_id}"
    r.add(
        one,
        GET=stack.show_stack,
        PUT=stack.update_stack,
        PATCH=stack.patch_stack,
        DELETE=stack.delete_stack,
    )
    r.add(
        one + "/preview",
        PUT=stack.preview_update,
        PATCH=stack.preview_update_patch,
    )
    r.add(one + "/abandon", DELETE=stack.abandon_stack)
    r.add(one + "/export", GET=stack.export_stack)
    r.add(one + "/template", GET=stack.get_template)
    r.add(one + "/environment", GET=stack.get_environment)
    r.add(one + "/files", GET=stack.get_files)
    r.add(one + "/outputs", GET=stack.list_outputs)
    r.add(one + "/outputs/{output_key}", GET=stack.show_output)
    r.add(one + "/actions", POST=stack.stack_action)
    r.add(one + "/verdict", POST=stack.verdict)
    r.add(one + "/promotions", GET=promotions.stack_promotions)
    r.add(
        one + "/snapshots",
        GET=snapshots.snapshot_list,
        POST=snapshots.snapshot_create,
    )
    r.add(
        one + "/snapshots/{snapshot_id}",
        GET=snapshots.snapshot_show,
        DELETE=snapshots.snapshot_delete,
    )
    r.add(
        one + "/snapshots/{snapshot_id}/restore",
        POST=snapshots.snapshot_restore,
    )
    return one


def _resource_routes(r, one):
    r.add(one + "/resources", GET=resources.list_resources)
    res = one + "/resources/{resource}"
    r.add(res, GET=resources.show_resource, PATCH=resources.mark_unhealthy)
    r.add(res + "/metadata", GET=resources.metadata)
    r.add(res + "/signal", POST=resources.signal)
    r.add(res + "/versions", GET=resources.resource_versions)
    r.add(res + "/events", GET=events.list_resource_events)
    r.add(res + "/events/{event_id}", GET=events.show_event)
    r.add(one + "/events", GET=events.list_events)


def build():
    r = router.Router()
    one = _stack_routes(r, "/v1/{tenant}/stacks")
    _resource_routes(r, one)
    top = "/v1/{tenant}"
    r.add(top + "/validate", POST=templates.validate)
    r.add(top + "/template_versions", GET=templates.list_versions)
    r.add(
        top + "/template_versions/{version}/functions",
        GET=templates.list_functions,
    )
    r.add(top + "/resource_types", GET=templates.list_resource_types)
    r.add(top + "/resource_types/{type_name}", GET=templates.resource_schema)
    r.add(
        top + "/resource_types/{type_name}/template",
        GET=templates.generate_template,
    )
    r.add(top + "/build_info", GET=services.build_info)
    r.add(top + "/services", GET=services.list_services)
    r.add(
        top + "/software_configs",
        GET=software_configs.list_software_configs,
        POST=software_configs.create_software_config,
    )
    r.add(
        top + "/software_configs/{config_id}",
        GET=software_configs.show_software_config,
        DELETE=software_configs.delete_software_config,
    )
    r.add(
        top + "/rollouts",
        GET=rollouts.list_rollouts,
        POST=rollouts.create_rollout,
    )
    r.add(
        top + "/rollouts/{rollout_id}",
        GET=rollouts.show_rollout,
        DELETE=rollouts.delete_rollout,
    )
    r.add(top + "/rollouts/{rollout_id}/actions", POST=rollouts.rollout_action)
    r.add(
        top + "/promotions",
        GET=promotions.list_promotions,
        POST=promotions.create_promotion,
    )
    r.add(top + "/promotions/{promotion_id}", GET=promotions.show_promotion)
    r.add(
        top + "/promotions/{promotion_id}/actions",
        POST=promotions.promotion_action,
    )
    r.add(top + "/references", GET=references.list_references)
    changes.add_routes(r, one, top)
    return r
