"""Handlers of one stack, /v1/{tenant}/stacks/{name}/{id}[/...]: show,
update, delete, preview of an update, template, environment, files,
outputs, export/abandon and actions (snapshots: ``snapshots``)."""

from heat_lite.api import schemas, views
from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import verify_spec


def identity(tenant, name, stack_id):
    return {
        "tenant": tenant,
        "stack_name": name,
        "stack_id": stack_id,
        "path": "",
    }


@rule("stacks:show")
@query(resolve_outputs=schemas.Q_BOOL)
def show_stack(req, tenant, name, stack_id):
    """Show a stack: status, parameters, outputs, tags."""
    stack = req.engine.show_stack(
        req.context,
        identity(tenant, name, stack_id),
        resolve_outputs=req.bool_param("resolve_outputs", True),
    )
    if not req.context.is_admin:
        stack.pop("project", None)
    return Reply(200, {"stack": views.stack(req.app_url, stack)})


def update_request(req, tenant, name, stack_id, existing, body=None):
    """The arguments of an update (or its preview, or its plan) from the
    request's body (``body``: already read)."""
    body = req.body() if body is None else body
    stack_body.check_keys(body, stack_body.UPDATE_KEYS)
    params, files, environment, env_files = stack_body.sources(body)
    return (
        req.context,
        identity(tenant, name, stack_id),
        stack_body.template(body, required=not existing),
        params,
        files,
        environment,
        env_files,
        stack_body.args(body, True),
    )


@rule("stacks:update")
def update_stack(req, tenant, name, stack_id):
    """Update a stack to a new template (convergence, same id)."""
    req.engine.update_stack(
        *update_request(req, tenant, name, stack_id, False), existing=False
    )
    return Reply(202, None)


@rule("stacks:update_patch")
def patch_stack(req, tenant, name, stack_id):
    """Update a stack, keeping what the request does not change."""
    req.engine.update_stack(
        *update_request(req, tenant, name, stack_id, True), existing=True
    )
    return Reply(202, None)


def _preview_update(req, tenant, name, stack_id, existing):
    changes = req.engine.preview_update_stack(
        *update_request(req, tenant, name, stack_id, existing),
        existing=existing,
        show_nested=req.bool_param("show_nested"),
        with_drift=True,
    )
    # heatclient reads resource_changes only; the drift report's state is
    # heat_lite's own key beside it.
    drift = changes.pop("drift", None)
    return Reply(200, {"resource_changes": changes, "drift": drift})


@rule("stacks:preview_update")
@query(show_nested=schemas.Q_BOOL)
def preview_update(req, tenant, name, stack_id):
    """Show what an update would change, changing nothing."""
    return _preview_update(req, tenant, name, stack_id, False)


@rule("stacks:preview_update_patch")
@query(show_nested=schemas.Q_BOOL)
def preview_update_patch(req, tenant, name, stack_id):
    """Show what a PATCH update would change, changing nothing."""
    return _preview_update(req, tenant, name, stack_id, True)


@rule("stacks:delete")
def delete_stack(req, tenant, name, stack_id):
    """Delete a stack and its resources."""
    req.engine.delete_stack(req.context, identity(tenant, name, stack_id))
    return Reply(204)


@rule("stacks:abandon")
def abandon_stack(req, tenant, name, stack_id):
    """Abandon the stack: its data (for adopt), the stack tree removed,
    its physical resources left in place."""
    return Reply(
        200,
        req.engine.abandon_stack(
            req.context, identity(tenant, name, stack_id)
        ),
    )


@rule("stacks:export")
def export_stack(req, tenant, name, stack_id):
    """The stack's abandon data, the stack left as it is."""
    return Reply(
        200,
        req.engine.export_stack(req.context, identity(tenant, name, stack_id)),
    )


@rule("stacks:template")
def get_template(req, tenant, name, stack_id):
    """The stack's template, as submitted."""
    return Reply(
        200,
        req.engine.get_template(req.context, identity(tenant, name, stack_id)),
    )


@rule("stacks:environment")
def get_environment(req, tenant, name, stack_id):
    """The stack's environment, hidden parameter values masked."""
    return Reply(
        200,
        req.engine.get_environment(
            req.context, identity(tenant, name, stack_id)
        ),
    )


@rule("stacks:files")
def get_files(req, tenant, name, stack_id):
    """The stack's files, as submitted."""
    return Reply(
        200,
        req.engine.get_files(req.context, identity(tenant, name, stack_id)),
    )


@rule("stacks:list_outputs")
def list_outputs(req, tenant, name, stack_id):
    """List the stack's outputs (keys and descriptions)."""
    return Reply(
        200,
        {
            "outputs": req.engine.list_outputs(
                req.context, identity(tenant, name, stack_id)
            )
        },
    )


@rule("stacks:show_output")
def show_output(req, tenant, name, stack_id, output_key):
    """Show one output, resolved (or its ``output_error``)."""
    return Reply(
        200,
        {
            "output": req.engine.show_output(
                req.context, identity(tenant, name, stack_id), output_key
            )
        },
    )


ACTIONS = (
    "suspend",
    "resume",
    "check",
    "cancel_update",
    "cancel_without_rollback",
    "detect_drift",
    "update_semantics",
)


@rule("actions:action")
def stack_action(req, tenant, name, stack_id):
    """Suspend, resume, check or cancel an update of a stack, start a
    drift detection (202), or set the stack's update semantics
    (heat_lite's own ``{"update_semantics": "queue"}``)."""
    action, value = req.action(ACTIONS, value=True)
    ident = identity(tenant, name, stack_id)
    if action == "detect_drift":
        return Reply(202, req.engine.detect_drift(req.context, ident))
    if action == "update_semantics":
        semantics = stack_body.update_semantics(value)
        return Reply(
            200, req.engine.set_update_semantics(req.context, ident, semantics)
        )
    if action in ("cancel_update", "cancel_without_rollback"):
        req.engine.stack_cancel_update(
            req.context, ident, cancel_with_rollback=action == "cancel_update"
        )
    else:
        req.engine.stack_action(req.context, ident, action.upper())
    return Reply(200, None)


@rule("stacks:drift")
def show_drift(req, tenant, name, stack_id):
    """The stack's last drift detection, resource by resource."""
    return Reply(
        200,
        {
            "drift": req.engine.show_drift(
                req.context, identity(tenant, name, stack_id)
            )
        },
    )


@rule("stacks:verdict")
def verdict(req, tenant, name, stack_id):
    """Give the stack's running verification its verdict (PASS / FAIL)."""
    body = req.body()
    stack_body.check_keys(body, ("status", "reason"))
    status, reason = verify_spec.verdict(
        body.get("status"), body.get("reason")
    )
    req.engine.stack_verdict(
        req.context, identity(tenant, name, stack_id), status, reason
    )
    return Reply(200, None)
