"""Stack snapshots (Heat API v1 ``/snapshots``) and restoring them.

A snapshot is a SNAPSHOT walk of the stack on its own template: each
resource's ``handle_snapshot`` runs (a server makes an image of itself,
polled to ``active`` by ``check_snapshot_complete``, and keeps its ID in
its data as ``snapshot_image_id``). When the walk ends the traversal ops
call ``Snapshots.finish``: the snapshot gets the stack's status and, if
COMPLETE, the stack's abandon data (template, environment, files and
every resource's ``resource_data``), as Heat keeps it.

Restore is a RESTORE traversal onto the snapshot's template, environment
and files, where each resource whose plugin knows how
(``restore_properties(entry)``) gets properties from its snapshot data:
a server's ``image`` becomes its snapshot image, so it is rebuilt from it
(or replaced, per ``image_update_policy``). Every other resource keeps
its physical resource and data. Deleting a snapshot deletes what its
resources made for it (``handle_delete_snapshot(entry)``: the image);
deleting a stack deletes its snapshots first.

Snapshots cover the stack's own resources: the resources of nested
stacks are not snapshotted.
"""

import copy
import json
import logging
import uuid

from heat_lite.common import exception, policy
from heat_lite.common.states import SNAPSHOT as S
from heat_lite.common.states import Status
from heat_lite.db import image_holds
from heat_lite.db import snapshots as db_snapshots
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import definitions, trusts, validation
from heat_lite.engine.endpoint import abandon
from heat_lite.engine.endpoint.base import TARGET, expected, find_stack
from heat_lite.engine.traversal import ops as stacks
from heat_lite.engine.worker import caller

LOG = logging.getLogger(__name__)


def view(snapshot):
    """Heat's engine format of a snapshot (with ``stack_id`` and
    ``action``, which ``openstack stack snapshot list`` shows)."""
    created = snapshot["created_at"]
    return {
        "id": snapshot["id"],
        "name": snapshot["name"],
        "stack_id": snapshot["stack_id"],
        "action": "SNAPSHOT",
        "status": snapshot["status"],
        "status_reason": snapshot["status_reason"],
        "data": snapshot["data"],
        "creation_time": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _plugin(stack, entry, services):
    """A plugin of the resource a snapshot entry describes (acting
    through the stack's trust), or None for a type no longer known."""
    record = {
        "name": entry["name"],
        "type": entry["type"],
        "properties_data": "{}",
        "physical_resource_id": entry.get("resource_id"),
        "rsrc_data": json.dumps(entry.get("resource_data") or {}),
        "stack_name": stack["name"],
        "stack_id": stack["id"],
        "stack_tenant": stack["tenant"],
        "stack_trust": stack.get("trust_id"),
        "template_id": stack["raw_template_id"],
        "uuid": None,
    }
    try:
        return definitions.plugin_for(record, services)
    except exception.HeatLiteException:
        return None


def delete_artifacts(stack, snapshot, services):
    """Delete what the resources made for ``snapshot`` (their images),
    through plugins made with ``services`` (``definitions.plugin_for``).

    :raises HeatLiteException: a cloud refusing; the snapshot stays.
    """
    resources = (snapshot.get("data") or {}).get("resources") or {}
    for entry in resources.values():
        plugin = _plugin(stack, entry, services)
        handle = getattr(plugin, "handle_delete_snapshot", None)
        if handle is not None:
            handle(entry)


def delete_all(stack, services):
    """Delete every snapshot of ``stack`` (before the stack's delete).

    A snapshot still being taken has no data yet: the images its walk
    asked for so far are found in the resources' own data (the delete
    stops that walk's polls).
    """
    for snapshot in db_snapshots.snapshot_list(stack["id"]):
        if snapshot["status"] == S.IN_PROGRESS:
            snapshot = dict(snapshot, data=abandon.export(stack))
        delete_artifacts(stack, snapshot, services)
        db_snapshots.snapshot_delete(stack["id"], snapshot["id"])


def restore_template(stack, data, services):
    """The snapshot's template, each resource that can restore itself
    given its properties from its snapshot entry."""
    template = copy.deepcopy(data["template"])
    defined = template.get("resources") or {}
    for name, entry in (data.get("resources") or {}).items():
        if name not in defined:
            continue
        plugin = _plugin(stack, entry, services)
        restore = getattr(plugin, "restore_properties", None)
        if restore is None:
            continue
        changed = restore(entry)
        if changed:
            props = defined[name].setdefault("properties", {})
            props.update(changed)
    return template


class Snapshots:
    """The end of a SNAPSHOT walk (called by ``traversal.ops``)."""

    @staticmethod
    def finish(stack, traversal, status, reason):
        data = abandon.export(stack) if status == S.COMPLETE else None
        if data is not None:
            data.update(action="SNAPSHOT", status=status)
        finished = db_snapshots.snapshot_finish(
            stack["id"], traversal, status, reason, data
        )
        if finished and data is not None:
            # Restoring it boots from the images it names: keep them.
            snapshot = db_snapshots.snapshot_of_traversal(
                stack["id"], traversal
            )
            nested = [
                s["id"] for _, s in db_stacks.stack_descendants([stack["id"]])
            ]
            image_holds.hold_stack_images(
                stack["tenant"], [stack["id"], *nested], "snapshot", snapshot
            )


class SnapshotEndpoint:
    """stack_snapshot, show_snapshot, delete_snapshot,
    stack_list_snapshots and stack_restore (Heat's RPC names)."""

    target = TARGET

    def __init__(self, stack_ops, services):
        self.ops = stack_ops
        self.services = services

    @expected
    def stack_snapshot(self, ctxt, stack_identity, name):
        """Start a snapshot; return it (IN_PROGRESS).

        :raises ActionInProgress: (409) while an operation runs.
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        stacks.check_start(stack, "SNAPSHOT")
        if stack["status"] == Status.IN_PROGRESS:
            raise exception.ActionInProgress(
                stack_name=stack["name"], action=stack["action"]
            )
        trusts.ensure(ctxt, stack)
        traversal = str(uuid.uuid4())
        snapshot = db_snapshots.snapshot_create(
            {
                "id": str(uuid.uuid4()),
                "stack_id": stack["id"],
                "tenant": stack["tenant"],
                "name": name,
                "traversal": traversal,
                "status": S.IN_PROGRESS,
            }
        )
        bound = definitions.get(
            stack["raw_template_id"], definitions.stack_info(stack)
        )
        started = self.ops.start(
            stack,
            "SNAPSHOT",
            bound,
            goal_template_id=stack["raw_template_id"],
            retry=False,
            caller_token=caller.keep(ctxt),
            traversal=traversal,
        )
        if started is None:
            db_snapshots.snapshot_delete(stack["id"], snapshot["id"])
            stack = db_stacks.stack_get(stack["id"])
            raise exception.ActionInProgress(
                stack_name=stack["name"], action=stack["action"]
            )
        return view(snapshot)

    def _snapshot(self, ctxt, stack_identity, snapshot_id):
        stack = find_stack(ctxt, stack_identity, live=True)
        try:
            return stack, db_snapshots.snapshot_get(stack["id"], snapshot_id)
        except exception.SnapshotNotFound:
            raise exception.SnapshotNotFound(
                snapshot=snapshot_id, stack=stack["name"]
            ) from None

    @expected
    def show_snapshot(self, ctxt, stack_identity, snapshot_id):
        return view(self._snapshot(ctxt, stack_identity, snapshot_id)[1])

    @expected
    def stack_list_snapshots(self, ctxt, stack_identity):
        stack = find_stack(ctxt, stack_identity, live=True)
        return [view(s) for s in db_snapshots.snapshot_list(stack["id"])]

    @expected
    def delete_snapshot(self, ctxt, stack_identity, snapshot_id):
        """Delete a snapshot and its images.

        :raises ActionInProgress: (409) while it is being taken.
        """
        stack, snapshot = self._snapshot(ctxt, stack_identity, snapshot_id)
        if snapshot["status"] == S.IN_PROGRESS:
            raise exception.ActionInProgress(
                stack_name=stack["name"], action="SNAPSHOT"
            )
        delete_artifacts(stack, snapshot, self.services)
        db_snapshots.snapshot_delete(stack["id"], snapshot_id)

    @expected
    def stack_restore(self, ctxt, stack_identity, snapshot_id):
        """Start restoring the stack to a COMPLETE snapshot.

        :raises NotSupported: (400) for a snapshot not COMPLETE.
        """
        stack, snapshot = self._snapshot(ctxt, stack_identity, snapshot_id)
        if snapshot["status"] != S.COMPLETE:
            raise exception.NotSupported(
                feature="Restoring a snapshot that is %s" % snapshot["status"]
            )
        stacks.check_start(stack, "RESTORE")
        trusts.ensure(ctxt, stack)
        data = snapshot["data"]
        template = restore_template(stack, data, self.services)
        env = validation.environment(data["environment"], None)
        files = data.get("files") or {}
        bound = validation.bind(
            template,
            env,
            files,
            definitions.stack_info(stack),
            authorize=lambda names: policy.authorize_resource_types(
                ctxt, names, ctxt.project_id
            ),
        )
        self.ops.start(
            stack,
            "RESTORE",
            bound,
            new_template=(template, env, files),
            caller_token=caller.keep(ctxt),
        )
