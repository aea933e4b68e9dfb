"""``openstack stack drift detect|show``: property-level drift
(``POST .../actions {"detect_drift": null}`` and ``GET .../drift``).

``show`` lists one row per drifted property (a MODIFIED resource), per
DELETED or NOT_CHECKED resource (with why) and per resource in sync,
after a first row for the stack itself: its overall status and when it
was detected (in the last column, "Actual / Detail", which holds a
NOT_CHECKED resource's reason too). Nested stacks' resources are named
by their path (``group/0``).
"""

import time

from osc_lib.command import command

from heat_lite_client import api, field_hook, waiting

COLUMNS = (
    "Resource",
    "Type",
    "Drift Status",
    "Property",
    "Expected",
    "Actual / Detail",
)
IN_PROGRESS = "DETECTION_IN_PROGRESS"
FAILED = "DETECTION_FAILED"


def _stack_path(client, name_or_id):
    stack = client.stacks.get(name_or_id, resolve_outputs=False)
    return "/stacks/%s/%s" % (stack.stack_name, stack.id)


def _show(client, path):
    return api.call(client, "GET", path + "/drift")["drift"]


def rows(drift, only_drifted=False):
    """The table rows of a drift report (see the module docstring)."""
    found = [
        (
            drift.get("stack_name") or drift["stack_id"],
            "OS::Heat::Stack",
            drift["drift_status"],
            "",
            "",
            drift.get("detected_at") or drift.get("drift_status_reason") or "",
        )
    ]
    for entry in drift["resources"]:
        status = entry["drift_status"]
        if only_drifted and status not in ("MODIFIED", "DELETED"):
            continue
        name = "/".join(
            p
            for p in (entry.get("parent_resource"), entry["resource_name"])
            if p
        )
        head = (name, entry["resource_type"], status)
        props = entry.get("properties") or []
        if not props:
            found.append(head + ("", "", entry.get("reason") or ""))
        for prop in props:
            found.append(
                head
                + (prop["name"], str(prop["expected"]), str(prop["actual"]))
            )
    return found


class _DriftLister(command.Lister):
    """What both drift commands share: the stack argument and a report
    shown as a table."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        return parser

    def _client_and_path(self, parsed_args):
        client = self.app.client_manager.orchestration
        return client, _stack_path(client, parsed_args.stack)


class DetectDrift(waiting.ExitsOneWhenFailed, _DriftLister):
    """Detect the drift of a stack's resources (nested stacks included).

    With ``--wait`` the command exits 1 when the detection FAILED, as the
    rollout and promotion commands do."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        waiting.add_wait(parser, "drift detection")
        return parser

    def take_action(self, parsed_args):
        client, path = self._client_and_path(parsed_args)
        api.call(client, "POST", path + "/actions", {"detect_drift": None})
        drift = _show(client, path)
        if parsed_args.wait:
            while drift["drift_status"] == IN_PROGRESS:
                time.sleep(parsed_args.poll)
                drift = _show(client, path)
            self._failed = drift["drift_status"] == FAILED
        return COLUMNS, rows(drift)


class ShowDrift(_DriftLister):
    """Show a stack's last drift detection."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--drifted",
            action="store_true",
            help="Only the MODIFIED and DELETED resources",
        )
        return parser

    def take_action(self, parsed_args):
        client, path = self._client_and_path(parsed_args)
        return COLUMNS, rows(_show(client, path), parsed_args.drifted)


class UpdateHook(field_hook.StackFieldHook):
    """``openstack stack update --revert-drift``: the update (or its
    ``--dry-run``) also puts every drifted resource of the last drift
    detection back onto the template (``revert_drift``)."""

    method = "update"
    also = ("preview_update",)
    key = "revert_drift"

    def add_options(self, parser):
        parser.add_argument(
            "--revert-drift",
            action="store_true",
            default=False,
            help="heat_lite: converge the resources the last drift "
            "detection found drifted back onto the template (and re-create "
            "deleted ones), even where the template did not change",
        )

    def value(self, parsed_args):
        return True if getattr(parsed_args, "revert_drift", False) else None
