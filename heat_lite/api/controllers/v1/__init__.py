"""The v1 controller tree: Heat's paths under /v1/{tenant}.

Read it from the bottom (``Tenant``) up. Each class is one URL; its
methods are the HTTP methods it answers (``verb``), ``_children`` the
fixed segments below it and ``_param`` the variable one (see
``controllers.base``). ``openapi.build`` walks this tree, so what is
documented is what is routed.

To add a route: write the handler (``@rule`` and, for query parameters,
``@query``) in its module, its answer in ``schemas.RESPONSES``, and hang
a node on the tree, e.g. ``"dashboard_feed": leaf(get=feed.stream)`` in
``Tenant._children``; ``tests/unit/api/test_tree.py`` lists every URL.
"""

import re

import pecan

from heat_lite.api.controllers.base import Branch, Node, leaf, verb
from heat_lite.api.controllers.v1 import (
    apps,
    builds,
    changes,
    events,
    images,
    plans,
    promotions,
    query,
    references,
    resources,
    retention,
    rollouts,
    services,
    snapshots,
    software_configs,
    software_deployments,
    stack,
    stacks,
    templates,
    traversals,
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
    "drift",
    "traversals",
    "plans",
    "export",
    "abandon",
    "preview",
    "verdict",
    "promotions",
)
ARN_PREFIX = "arn:openstack:heat::"
# An ARN's slashes may arrive quoted (%2F): WSGI servers leave them so.
_SLASH = r"(?:/|%2[Ff])"
_ARN = re.compile(
    r"\Aarn:openstack:heat::(?P<arn_tenant>[^:/]*):stacks"
    + _SLASH
    + r"(?P<name>[^/%]+)"
    + _SLASH
    + r"(?P<stack_id>[^/%]+)(?P<sub>/.+?)?/?\Z"
)


class _Redirect(Node):
    get_all = post = put = patch = delete = verb(stacks.lookup)


class NameLookup(_Redirect):
    """/stacks/{name}/<sub-path>: redirected to the stack's URL."""

    _rest = "sub"


class ArnLookup(Node):
    """/stacks/arn:openstack:heat::<tenant>:stacks/<name>/<id>[/...]."""

    get_all = post = put = patch = delete = verb(stacks.lookup_arn)


class ResourceEvents(Node):
    get_all = verb(events.list_resource_events)
    _param = ("event_id", leaf(get=events.show_event))


class Resource(Node):
    """/stacks/{name}/{stack_id}/resources/{resource}"""

    get_all = verb(resources.show_resource)
    patch = verb(resources.mark_unhealthy)
    _children = {
        "metadata": leaf(get=resources.metadata),
        "signal": leaf(post=resources.signal),
        "versions": leaf(get=resources.resource_versions),
        "events": ResourceEvents,
    }


class Resources(Node):
    get_all = verb(resources.list_resources)
    _param = ("resource", Resource)


class Outputs(Node):
    get_all = verb(stack.list_outputs)
    _param = ("output_key", leaf(get=stack.show_output))


class Snapshot(Node):
    get_all = verb(snapshots.snapshot_show)
    delete = verb(snapshots.snapshot_delete)
    _children = {"restore": leaf(post=snapshots.snapshot_restore)}


class Snapshots(Node):
    get_all = verb(snapshots.snapshot_list)
    post = verb(snapshots.snapshot_create)
    _param = ("snapshot_id", Snapshot)


class Traversals(Node):
    """/stacks/{name}/{stack_id}/traversals[/{traversal_id}]"""

    get_all = verb(traversals.list_traversals)
    _param = (
        "traversal_id",
        leaf(delete=traversals.cancel_traversal),
    )


class Plan(Node):
    """/stacks/{name}/{stack_id}/plans/{plan_id}"""

    get_all = verb(plans.show_plan)
    delete = verb(plans.delete_plan)
    _children = {"apply": leaf(post=plans.apply_plan)}


class Plans(Node):
    get_all = verb(plans.list_plans)
    post = verb(plans.create_plan)
    _param = ("plan_id", Plan)


class Stack(Node):
    """/stacks/{name}/{stack_id}: the canonical URL of a stack."""

    get_all = verb(stack.show_stack)
    put = verb(stack.update_stack)
    patch = verb(stack.patch_stack)
    delete = verb(stack.delete_stack)
    _children = {
        "preview": leaf(
            put=stack.preview_update, patch=stack.preview_update_patch
        ),
        "abandon": leaf(delete=stack.abandon_stack),
        "export": leaf(get=stack.export_stack),
        "template": leaf(get=stack.get_template),
        "environment": leaf(get=stack.get_environment),
        "files": leaf(get=stack.get_files),
        "outputs": Outputs,
        "actions": leaf(post=stack.stack_action),
        "verdict": leaf(post=stack.verdict),
        "drift": leaf(get=stack.show_drift),
        "traversals": Traversals,
        "plans": Plans,
        "promotions": leaf(get=promotions.stack_promotions),
        "snapshots": Snapshots,
        "resources": Resources,
        "events": leaf(get=events.list_events),
        "changes": leaf(get=changes.stack_changes),
    }


class StackName(_Redirect):
    """/stacks/{name}: redirected to /stacks/{name}/{stack_id}."""

    _children = dict.fromkeys(LOOKUP_SUBS, NameLookup)
    _param = ("stack_id", Stack)


class Stacks(Node):
    """/stacks: list and create; below it a name, an id or an ARN."""

    get_all = verb(stacks.list_stacks)
    post = verb(stacks.create_stack)
    _children = {
        "detail": leaf(get=stacks.list_stacks_detail),
        "preview": leaf(post=stacks.preview_stack),
        "query": leaf(post=query.query_stacks),
    }
    _param = ("name", StackName)

    def __init__(self, engine):
        super().__init__(engine)
        self._arn = ArnLookup(engine)

    @pecan.expose()
    def _lookup(self, segment, *remainder):
        if segment.startswith(ARN_PREFIX):
            found = _ARN.match("/".join((segment,) + remainder))
            if found is None:
                return super()._lookup(segment, *remainder)
            self._capture(**found.groupdict())
            return self._arn, ()
        if segment in self._kids and remainder not in ((), ("",)):
            # /stacks/detail/<id> is the stack named "detail".
            name, child = self._param_kid
            return self._child(child, name, segment, remainder)
        return super()._lookup(segment, *remainder)


class ResourceType(Node):
    get_all = verb(templates.resource_schema)
    _children = {"template": leaf(get=templates.generate_template)}


class SoftwareConfigs(Node):
    get_all = verb(software_configs.list_software_configs)
    post = verb(software_configs.create_software_config)
    _param = (
        "config_id",
        leaf(
            get=software_configs.show_software_config,
            delete=software_configs.delete_software_config,
        ),
    )


class SoftwareDeploymentMetadata(Node):
    _param = (
        "server_id",
        leaf(get=software_deployments.metadata_software_deployments),
    )


class SoftwareDeployments(Node):
    get_all = verb(software_deployments.list_software_deployments)
    post = verb(software_deployments.create_software_deployment)
    _children = {"metadata": SoftwareDeploymentMetadata}
    _param = (
        "deployment_id",
        leaf(
            get=software_deployments.show_software_deployment,
            put=software_deployments.update_software_deployment,
            delete=software_deployments.delete_software_deployment,
        ),
    )


class Rollout(Node):
    get_all = verb(rollouts.show_rollout)
    delete = verb(rollouts.delete_rollout)
    _children = {"actions": leaf(post=rollouts.rollout_action)}


class Promotion(Node):
    get_all = verb(promotions.show_promotion)
    _children = {"actions": leaf(post=promotions.promotion_action)}


class Build(Node):
    get_all = verb(builds.show_build)
    _children = {
        "log": leaf(get=builds.build_log),
        "actions": leaf(post=builds.build_action),
    }


class Builds(Node):
    get_all = verb(builds.list_builds)
    _param = ("build", Build)


class App(Node):
    get_all = verb(apps.show_app)
    patch = verb(apps.update_app)
    delete = verb(apps.delete_app)
    _children = {
        "builds": Builds,
        "pushes": leaf(post=builds.push),
        "webhook": leaf(post=builds.webhook),
        # image retention (issue 30)
        "image_events": leaf(get=images.list_app_image_events),
    }


class Apps(Node):
    get_all = verb(apps.list_apps)
    post = verb(apps.create_app)
    _param = ("app", App)


class Images(Node):
    get_all = verb(images.list_images)
    _children = {"actions": leaf(post=images.image_action)}
    _param = ("image_id", leaf(get=images.show_image))


class Retention(Node):
    get_all = verb(retention.show_retention)
    put = verb(retention.set_retention)
    delete = verb(retention.delete_retention)


class TemplateVersion(Branch):
    _children = {"functions": leaf(get=templates.list_functions)}


class TemplateVersions(Node):
    get_all = verb(templates.list_versions)
    _param = ("version", TemplateVersion)


class ResourceTypes(Node):
    get_all = verb(templates.list_resource_types)
    _param = ("type_name", ResourceType)


class Rollouts(Node):
    get_all = verb(rollouts.list_rollouts)
    post = verb(rollouts.create_rollout)
    _param = ("rollout_id", Rollout)


class Promotions(Node):
    get_all = verb(promotions.list_promotions)
    post = verb(promotions.create_promotion)
    _children = {"preview": leaf(post=promotions.preview_promotion)}
    _param = ("promotion_id", Promotion)


class Tenant(Branch):
    """/v1/{tenant}: the project's collections."""

    _children = {
        "stacks": Stacks,
        "validate": leaf(post=templates.validate),
        "template_versions": TemplateVersions,
        "resource_types": ResourceTypes,
        "build_info": leaf(get=services.build_info),
        "services": leaf(get=services.list_services),
        "software_configs": SoftwareConfigs,
        "software_deployments": SoftwareDeployments,
        "rollouts": Rollouts,
        "promotions": Promotions,
        "apps": Apps,
        "images": Images,
        "retention": Retention,
        "references": leaf(get=references.list_references),
        "changes": leaf(get=changes.project_changes),
    }


class V1(Branch):
    """/v1: the project in the URL."""

    _param = ("tenant", Tenant)
