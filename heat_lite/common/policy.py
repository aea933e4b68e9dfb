"""Who may do what: oslo.policy rules in code, Heat's rule names.

Defaults:

* an admin (role ``admin``) may do everything, in every project, and
  list every project's stacks with ``global_tenant``;
* a caller whose only role in the project is ``reader`` may read the
  project's stacks but change nothing;
* everyone else may read and change the stacks of their own project.

(The API's authentication already refuses a URL project that is not the
caller's, unless the caller is admin; the rules check it again.) An
operator overrides any rule in ``[oslo_policy] policy_file``;
``oslopolicy-sample-generator --namespace heat_lite`` prints them all.
"""

import fnmatch
import threading

from oslo_policy import policy

from heat_lite import conf
from heat_lite.common import exception

CONF = conf.CONF
_LOCK = threading.Lock()
_STATE = {"enforcer": None}

ADMIN = "role:admin"
OWNER = "project_id:%(project_id)s"
# Someone who is not only a reader: any other role, or none at all.
NOT_READER_ONLY = "not role:reader or role:member or role:admin"

_BASE = [
    policy.RuleDefault(
        "context_is_admin", ADMIN, description="Decides what an admin is."
    ),
    policy.RuleDefault(
        "project_reader",
        "rule:context_is_admin or " + OWNER,
        description="May read the project's stacks.",
    ),
    policy.RuleDefault(
        "project_writer",
        "rule:context_is_admin or (%s and (%s))" % (OWNER, NOT_READER_ONLY),
        description="May change the project's stacks.",
    ),
]

# (name, check, description, [(method, path)]) of every operation.
_READ, _WRITE, _ADMIN = (
    "rule:project_reader",
    "rule:project_writer",
    "rule:context_is_admin",
)
_STACK = "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}"
_RESOURCE = _STACK + "/resources/{resource_name}"
_SNAP = _STACK + "/snapshots"
_OPERATIONS = [
    ("stacks:index", _READ, "List stacks.", "GET", "/v1/{tenant_id}/stacks"),
    (
        "stacks:detail",
        _READ,
        "List stacks in detail.",
        "GET",
        "/v1/{tenant_id}/stacks/detail",
    ),
    (
        "stacks:global_index",
        _ADMIN,
        "List the stacks of every project.",
        "GET",
        "/v1/{tenant_id}/stacks?global_tenant=true",
    ),
    (
        "stacks:create",
        _WRITE,
        "Create a stack.",
        "POST",
        "/v1/{tenant_id}/stacks",
    ),
    (
        "stacks:preview",
        _READ,
        "Preview a stack.",
        "POST",
        "/v1/{tenant_id}/stacks/preview",
    ),
    (
        "stacks:lookup",
        _READ,
        "Find a stack by name, id or ARN.",
        "GET",
        "/v1/{tenant_id}/stacks/{stack_identity}",
    ),
    ("stacks:show", _READ, "Show a stack.", "GET", _STACK),
    ("stacks:update", _WRITE, "Update a stack.", "PUT", _STACK),
    (
        "stacks:update_patch",
        _WRITE,
        "Update a stack (PATCH).",
        "PATCH",
        _STACK,
    ),
    (
        "stacks:preview_update",
        _READ,
        "Preview an update.",
        "PUT",
        _STACK + "/preview",
    ),
    (
        "stacks:preview_update_patch",
        _READ,
        "Preview an update (PATCH).",
        "PATCH",
        _STACK + "/preview",
    ),
    ("stacks:delete", _WRITE, "Delete a stack.", "DELETE", _STACK),
    (
        "stacks:abandon",
        _WRITE,
        "Abandon a stack.",
        "DELETE",
        _STACK + "/abandon",
    ),
    ("stacks:export", _READ, "Export a stack.", "GET", _STACK + "/export"),
    (
        "stacks:template",
        _READ,
        "Show a stack's template.",
        "GET",
        _STACK + "/template",
    ),
    (
        "stacks:environment",
        _READ,
        "Show a stack's environment.",
        "GET",
        _STACK + "/environment",
    ),
    ("stacks:files", _READ, "Show a stack's files.", "GET", _STACK + "/files"),
    (
        "stacks:list_outputs",
        _READ,
        "List a stack's outputs.",
        "GET",
        _STACK + "/outputs",
    ),
    (
        "stacks:show_output",
        _READ,
        "Show an output.",
        "GET",
        _STACK + "/outputs/{output_key}",
    ),
    ("stacks:snapshot", _WRITE, "Snapshot a stack.", "POST", _SNAP),
    ("stacks:list_snapshots", _READ, "List snapshots.", "GET", _SNAP),
    (
        "stacks:show_snapshot",
        _READ,
        "Show a snapshot.",
        "GET",
        _SNAP + "/{snapshot_id}",
    ),
    (
        "stacks:delete_snapshot",
        _WRITE,
        "Delete a snapshot.",
        "DELETE",
        _SNAP + "/{snapshot_id}",
    ),
    (
        "stacks:restore_snapshot",
        _WRITE,
        "Restore a snapshot.",
        "POST",
        _SNAP + "/{snapshot_id}/restore",
    ),
    (
        "stacks:verdict",
        _WRITE,
        "Give a running verification its verdict.",
        "POST",
        _STACK + "/verdict",
    ),
    (
        "stacks:query",
        _READ,
        "Find the project's stacks matching a selector.",
        "POST",
        "/v1/{tenant_id}/stacks/query",
    ),
    (
        "stacks:query_all_projects",
        _ADMIN,
        "Find the stacks of every project matching a selector.",
        "POST",
        "/v1/{tenant_id}/stacks/query",
    ),
    (
        "stacks:drift",
        _READ,
        "Show a stack's last drift detection.",
        "GET",
        _STACK + "/drift",
    ),
    (
        "stacks:traversals",
        _READ,
        "List a stack's running, queued and recent traversals.",
        "GET",
        _STACK + "/traversals",
    ),
    (
        "stacks:cancel_traversal",
        _WRITE,
        "Cancel a stack's queued update.",
        "DELETE",
        _STACK + "/traversals/{traversal_id}",
    ),
    (
        "stacks:plan_create",
        _WRITE,
        "Preview an update and save it as a plan.",
        "POST",
        _STACK + "/plans",
    ),
    (
        "stacks:plan_index",
        _READ,
        "List a stack's plans.",
        "GET",
        _STACK + "/plans",
    ),
    (
        "stacks:plan_show",
        _READ,
        "Show a saved plan.",
        "GET",
        _STACK + "/plans/{plan_id}",
    ),
    (
        "stacks:plan_delete",
        _WRITE,
        "Delete a saved plan.",
        "DELETE",
        _STACK + "/plans/{plan_id}",
    ),
    (
        "stacks:plan_apply",
        _WRITE,
        "Apply a saved plan (start its update).",
        "POST",
        _STACK + "/plans/{plan_id}/apply",
    ),
    (
        "actions:action",
        _WRITE,
        "Suspend, resume, check, cancel, detect drift or set the update "
        "semantics.",
        "POST",
        _STACK + "/actions",
    ),
    ("resource:index", _READ, "List resources.", "GET", _STACK + "/resources"),
    ("resource:show", _READ, "Show a resource.", "GET", _RESOURCE),
    (
        "resource:metadata",
        _READ,
        "Show a resource's metadata.",
        "GET",
        _RESOURCE + "/metadata",
    ),
    (
        "resource:signal",
        _WRITE,
        "Signal a resource.",
        "POST",
        _RESOURCE + "/signal",
    ),
    (
        "resource:mark_unhealthy",
        _WRITE,
        "Mark a resource (un)healthy.",
        "PATCH",
        _RESOURCE,
    ),
    ("events:index", _READ, "List events.", "GET", _STACK + "/events"),
    (
        "events:show",
        _READ,
        "Show an event.",
        "GET",
        _RESOURCE + "/events/{event_id}",
    ),
    (
        "stacks:validate_template",
        _READ,
        "Validate a template.",
        "POST",
        "/v1/{tenant_id}/validate",
    ),
    (
        "stacks:list_template_versions",
        _READ,
        "List template versions.",
        "GET",
        "/v1/{tenant_id}/template_versions",
    ),
    (
        "stacks:list_template_functions",
        _READ,
        "List template functions.",
        "GET",
        "/v1/{tenant_id}/template_versions/{version}/functions",
    ),
    (
        "stacks:list_resource_types",
        _READ,
        "List resource types.",
        "GET",
        "/v1/{tenant_id}/resource_types",
    ),
    (
        "stacks:resource_schema",
        _READ,
        "Show a resource type.",
        "GET",
        "/v1/{tenant_id}/resource_types/{type_name}",
    ),
    (
        "stacks:generate_template",
        _READ,
        "Template of a resource type.",
        "GET",
        "/v1/{tenant_id}/resource_types/{type_name}/template",
    ),
    (
        "build_info:build_info",
        _READ,
        "Show build information.",
        "GET",
        "/v1/{tenant_id}/build_info",
    ),
    (
        "service:index",
        _ADMIN,
        "List engine services.",
        "GET",
        "/v1/{tenant_id}/services",
    ),
    (
        "software_configs:index",
        _READ,
        "List software configs.",
        "GET",
        "/v1/{tenant_id}/software_configs",
    ),
    (
        "software_configs:create",
        _WRITE,
        "Create a software config.",
        "POST",
        "/v1/{tenant_id}/software_configs",
    ),
    (
        "software_configs:show",
        _READ,
        "Show a software config.",
        "GET",
        "/v1/{tenant_id}/software_configs/{config_id}",
    ),
    (
        "software_configs:delete",
        _WRITE,
        "Delete a software config.",
        "DELETE",
        "/v1/{tenant_id}/software_configs/{config_id}",
    ),
    (
        "software_deployments:index",
        _READ,
        "List software deployments.",
        "GET",
        "/v1/{tenant_id}/software_deployments",
    ),
    (
        "software_deployments:create",
        _WRITE,
        "Create a software deployment.",
        "POST",
        "/v1/{tenant_id}/software_deployments",
    ),
    (
        "software_deployments:show",
        _READ,
        "Show a software deployment.",
        "GET",
        "/v1/{tenant_id}/software_deployments/{deployment_id}",
    ),
    (
        "software_deployments:update",
        _WRITE,
        "Update a software deployment.",
        "PUT",
        "/v1/{tenant_id}/software_deployments/{deployment_id}",
    ),
    (
        "software_deployments:delete",
        _WRITE,
        "Delete a software deployment.",
        "DELETE",
        "/v1/{tenant_id}/software_deployments/{deployment_id}",
    ),
    (
        "software_deployments:metadata",
        _READ,
        "Show the deployment metadata of a server.",
        "GET",
        "/v1/{tenant_id}/software_deployments/metadata/{server_id}",
    ),
    (
        "rollouts:index",
        _READ,
        "List rollouts.",
        "GET",
        "/v1/{tenant_id}/rollouts",
    ),
    (
        "rollouts:create",
        _WRITE,
        "Start a rollout over the project's matching stacks.",
        "POST",
        "/v1/{tenant_id}/rollouts",
    ),
    (
        "rollouts:show",
        _READ,
        "Show a rollout.",
        "GET",
        "/v1/{tenant_id}/rollouts/{rollout_id}",
    ),
    (
        "rollouts:delete",
        _WRITE,
        "Delete a finished rollout.",
        "DELETE",
        "/v1/{tenant_id}/rollouts/{rollout_id}",
    ),
    (
        "rollouts:action",
        _WRITE,
        "Pause, resume, cancel or roll back a rollout.",
        "POST",
        "/v1/{tenant_id}/rollouts/{rollout_id}/actions",
    ),
    (
        "promotions:index",
        _READ,
        "List the promotions from or into the project.",
        "GET",
        "/v1/{tenant_id}/promotions",
    ),
    (
        "promotions:create",
        _WRITE,
        "Promote a stack's tested template onto another stack.",
        "POST",
        "/v1/{tenant_id}/promotions",
    ),
    (
        "promotions:preview",
        _READ,
        "Show what a promotion would change, changing nothing.",
        "POST",
        "/v1/{tenant_id}/promotions/preview",
    ),
    (
        "promotions:create_cross_project",
        _ADMIN,
        "Promote into (or roll back a promotion of) another project; "
        "checked against both projects.",
        "POST",
        "/v1/{tenant_id}/promotions",
    ),
    (
        "promotions:show",
        _READ,
        "Show a promotion.",
        "GET",
        "/v1/{tenant_id}/promotions/{promotion_id}",
    ),
    (
        "promotions:action",
        _WRITE,
        "Roll a promotion back.",
        "POST",
        "/v1/{tenant_id}/promotions/{promotion_id}/actions",
    ),
    (
        "promotions:stack",
        _READ,
        "List the promotions that changed a stack.",
        "GET",
        _STACK + "/promotions",
    ),
    (
        "apps:index",
        _READ,
        "List the project's apps.",
        "GET",
        "/v1/{tenant_id}/apps",
    ),
    (
        "apps:create",
        _WRITE,
        "Create an app: a git source built into images for its stacks.",
        "POST",
        "/v1/{tenant_id}/apps",
    ),
    (
        "apps:show",
        _READ,
        "Show an app.",
        "GET",
        "/v1/{tenant_id}/apps/{app}",
    ),
    (
        "apps:update",
        _WRITE,
        "Change an app.",
        "PATCH",
        "/v1/{tenant_id}/apps/{app}",
    ),
    (
        "apps:delete",
        _WRITE,
        "Delete an app.",
        "DELETE",
        "/v1/{tenant_id}/apps/{app}",
    ),
    (
        "apps:push",
        _WRITE,
        "Push a branch's commit to an app, making a build (git hooks and "
        "CI jobs; git servers post to the webhook, which takes no token).",
        "POST",
        "/v1/{tenant_id}/apps/{app}/pushes",
    ),
    (
        "apps:builds",
        _READ,
        "List and show an app's builds.",
        "GET",
        "/v1/{tenant_id}/apps/{app}/builds",
    ),
    (
        "apps:build_log",
        _READ,
        "Read a build's log.",
        "GET",
        "/v1/{tenant_id}/apps/{app}/builds/{build}/log",
    ),
    (
        "apps:cancel",
        _WRITE,
        "Cancel a build.",
        "POST",
        "/v1/{tenant_id}/apps/{app}/builds/{build}/actions",
    ),
    (
        "apps:image_events",
        _READ,
        "List what image retention did to the images of an app.",
        "GET",
        "/v1/{tenant_id}/apps/{app}/image_events",
    ),
    (
        "images:index",
        _READ,
        "List the images heat_lite built for the project's apps and what "
        "keeps each.",
        "GET",
        "/v1/{tenant_id}/images",
    ),
    (
        "images:show",
        _READ,
        "Show an image heat_lite built and what keeps it.",
        "GET",
        "/v1/{tenant_id}/images/{image_id}",
    ),
    (
        "images:dry_run",
        _READ,
        "Show what the next image retention pass would do to the "
        "project's images.",
        "POST",
        "/v1/{tenant_id}/images/actions",
    ),
    (
        "retention:show",
        _READ,
        "Show the project's default image retention (for its apps "
        "without their own) and the deployment's options.",
        "GET",
        "/v1/{tenant_id}/retention",
    ),
    (
        "retention:update",
        _WRITE,
        "Set or unset the project's default image retention (as "
        "apps:update sets an app's own).",
        "PUT",
        "/v1/{tenant_id}/retention",
    ),
    (
        "references:index",
        _READ,
        "Count the stacks using each value of a resource property.",
        "GET",
        "/v1/{tenant_id}/references",
    ),
    (
        "references:all_projects",
        _ADMIN,
        "Count references across every project.",
        "GET",
        "/v1/{tenant_id}/references?all_projects=true",
    ),
]


# Resource types only an admin may use, as in Heat (``resource_types:<type
# pattern>``; ``*`` matches any tail). The engine checks every type of a
# template against these (and any such rule an operator adds) before
# anything is created, so a non-admin gets 403 instead of the cloud's
# refusal half-way through a create.
RESOURCE_TYPE_SCOPE = "resource_types:"
_ADMIN_TYPES = ("OS::Nova::Flavor", "OS::Keystone::*")


def list_rules():
    """Every default rule (entry point ``oslo.policy.policies``)."""
    rules = list(_BASE)
    for pattern in _ADMIN_TYPES:
        rules.append(
            policy.RuleDefault(
                RESOURCE_TYPE_SCOPE + pattern,
                _ADMIN,
                description="May use resource type %s in a stack." % pattern,
            )
        )
    for name, check, description, method, path in _OPERATIONS:
        rules.append(
            policy.DocumentedRuleDefault(
                name=name,
                check_str=check,
                description=description,
                operations=[{"method": method, "path": path}],
            )
        )
    return rules


def get_enforcer():
    """The process's Enforcer (entry point ``oslo.policy.enforcer``)."""
    with _LOCK:
        if _STATE["enforcer"] is None:
            enforcer = policy.Enforcer(CONF)
            enforcer.register_defaults(list_rules())
            _STATE["enforcer"] = enforcer
        return _STATE["enforcer"]


def reset():
    with _LOCK:
        _STATE["enforcer"] = None


def authorize(ctxt, rule, project_id):
    """Check ``rule`` for ``ctxt`` on a target in ``project_id``.

    :raises Forbidden: if the policy says no.
    """
    target = {"project_id": project_id, "tenant_id": project_id}
    try:
        allowed = get_enforcer().enforce(rule, target, ctxt)
    except policy.InvalidScope:
        allowed = False
    if not allowed:
        raise exception.Forbidden(action=rule)


def authorize_resource_types(ctxt, type_names, project_id):
    """Check the ``resource_types:`` rules matching each type name.

    :raises Forbidden: naming the first rule that says no.
    """
    enforcer = get_enforcer()
    enforcer.load_rules()
    patterns = sorted(
        name[len(RESOURCE_TYPE_SCOPE) :]
        for name in enforcer.rules
        if name.startswith(RESOURCE_TYPE_SCOPE)
    )
    for type_name in sorted(set(type_names)):
        for pattern in patterns:
            if fnmatch.fnmatchcase(type_name, pattern):
                authorize(ctxt, RESOURCE_TYPE_SCOPE + pattern, project_id)
