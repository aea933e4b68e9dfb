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

from heat_lite_client import api

COLUMNS = (
    "Resource",
    "Type",
    "Drift Status",
    "Property",
    "Expected",
    "Actual / Detail",
)
IN_PROGRESS = "DETECTION_IN_PROGRESS"


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


class DetectDrift(command.Lister):
    """Detect the drift of a stack's resources (nested stacks included)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Wait for the detection and show its report",
        )
        parser.add_argument(
            "--poll",
            metavar="<seconds>",
            type=float,
            default=2.0,
            help="Seconds between two looks while waiting (default 2)",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = _stack_path(client, parsed_args.stack)
        api.call(client, "POST", path + "/actions", {"detect_drift": None})
        drift = _show(client, path)
        while parsed_args.wait and drift["drift_status"] == IN_PROGRESS:
            time.sleep(parsed_args.poll)
            drift = _show(client, path)
        return COLUMNS, rows(drift)


class ShowDrift(command.Lister):
    """Show a stack's last drift detection."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        parser.add_argument(
            "--drifted",
            action="store_true",
            help="Only the MODIFIED and DELETED resources",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        drift = _show(client, _stack_path(client, parsed_args.stack))
        return COLUMNS, rows(drift, parsed_args.drifted)
