"""Handlers of a stack's snapshots, /v1/{tenant}/stacks/{name}/{id}/
snapshots[/{snapshot_id}[/restore]]: Heat's shapes (create answers the
snapshot itself, show wraps it in ``snapshot``, list in ``snapshots``;
delete 204, restore 202)."""

from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.controllers.v1.stack import identity
from heat_lite.api.request import Reply, rule


@rule("stacks:snapshot")
def snapshot_create(req, tenant, name, stack_id):
    """Snapshot the stack (servers make images of themselves)."""
    body = req.body()
    stack_body.check_keys(body, ("name",))
    return Reply(
        200,
        req.engine.stack_snapshot(
            req.context,
            identity(tenant, name, stack_id),
            stack_body.snapshot_name(body),
        ),
    )


@rule("stacks:list_snapshots")
def snapshot_list(req, tenant, name, stack_id):
    """List the stack's snapshots."""
    snaps = req.engine.stack_list_snapshots(
        req.context, identity(tenant, name, stack_id)
    )
    return Reply(200, {"snapshots": snaps})


@rule("stacks:show_snapshot")
def snapshot_show(req, tenant, name, stack_id, snapshot_id):
    """Show one snapshot of the stack."""
    snap = req.engine.show_snapshot(
        req.context, identity(tenant, name, stack_id), snapshot_id
    )
    return Reply(200, {"snapshot": snap})


@rule("stacks:delete_snapshot")
def snapshot_delete(req, tenant, name, stack_id, snapshot_id):
    """Delete a snapshot and its images."""
    req.engine.delete_snapshot(
        req.context, identity(tenant, name, stack_id), snapshot_id
    )
    return Reply(204, None)


@rule("stacks:restore_snapshot")
def snapshot_restore(req, tenant, name, stack_id, snapshot_id):
    """Restore the stack onto a COMPLETE snapshot."""
    req.engine.stack_restore(
        req.context, identity(tenant, name, stack_id), snapshot_id
    )
    return Reply(202, None)
