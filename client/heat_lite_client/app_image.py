"""``openstack app images``: the images heat_lite built for the
project's apps, what keeps each (``--why``), which nothing names any
more (``--unused``), and what the next retention pass would do
(``--dry-run``) (``/v1/<project>/images``); ``openstack app image
events``: what retention did to an app's images
(``/v1/<project>/apps/<app>/image_events``).
"""

from urllib import parse

from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api

FIELDS = (
    "id",
    "name",
    "app_id",
    "branch",
    "build_id",
    "state",
    "kept_by",
    "retention",
    "created_at",
    "deployed_at",
    "unneeded_at",
    "hidden_at",
    "goes_at",
    "deleted_at",
    "last_error",
)


def _reason(reason):
    """One line for what keeps an image."""
    kind = reason["kind"]
    if kind == "record":
        return "record %s (%s) of stack %s" % (
            reason["name"],
            reason["role"],
            reason["stack_id"],
        )
    if kind == "keep_last":
        return "keep_last (newest %d)" % reason["rank"]
    return "%s %s" % (kind, reason["holder"])


def _event(event):
    """One line for what retention did to an image."""
    line = "%s at %s" % (event["action"], event["created_at"])
    if event.get("reason"):
        line += ": %s" % event["reason"]
    return line


class ListImages(command.Lister):
    """List the images heat_lite built for the project's apps: what
    keeps each, or when retention retires it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--app", metavar="<app>", help="Only this app's")
        parser.add_argument(
            "--unused",
            action="store_true",
            help="Only images nothing names any more (unneeded, hidden or "
            "being deleted)",
        )
        parser.add_argument(
            "--why",
            metavar="<image>",
            help="Show one image and everything that keeps it",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="What the next retention pass would do; nothing changes",
        )
        parser.add_argument("--limit", metavar="<n>", type=int)
        parser.add_argument("--marker", metavar="<id>")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        if parsed_args.why and parsed_args.dry_run:
            raise exceptions.CommandError(
                "--why and --dry-run exclude each other"
            )
        if parsed_args.why:
            image = api.call(client, "GET", "/images/%s" % parsed_args.why)[
                "image"
            ]
            rows = [(_reason(r),) for r in image["kept_by"]] or [
                (
                    "nothing: %s since %s"
                    % (image["state"], image["unneeded_at"]),
                )
            ]
            # What retention did to it, oldest first (older servers
            # send no events).
            rows += [(_event(e),) for e in reversed(image.get("events") or [])]
            return ("Kept by",), rows
        if parsed_args.dry_run:
            steps = api.call(
                client, "POST", "/images/actions", {"dry_run": None}
            )["decided"]
            return (
                ("ID", "State", "Next state", "Image service", "Why"),
                [
                    (s["id"], s["state"], s["to"], s["call"], s["why"])
                    for s in steps
                ],
            )
        query = [
            (k, v)
            for k, v in (
                ("app", parsed_args.app),
                ("unused", "true" if parsed_args.unused else None),
                ("limit", parsed_args.limit),
                ("marker", parsed_args.marker),
            )
            if v is not None
        ]
        path = "/images"
        if query:
            path += "?" + "&".join("%s=%s" % kv for kv in query)
        images = api.call(client, "GET", path)["images"]
        columns = ("ID", "Name", "Branch", "State", "Kept By", "Goes At")
        rows = [
            (
                i["id"],
                i["name"],
                i["branch"],
                i["state"],
                format_columns.ListColumn([_reason(r) for r in i["kept_by"]]),
                i["goes_at"],
            )
            for i in images
        ]
        return columns, rows


class ListImageEvents(command.Lister):
    """List what image retention did to an app's images (hidden,
    deleted, revived, delete_failed), newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("app", metavar="<app>", help="App (name or ID)")
        parser.add_argument("--limit", metavar="<n>", type=int)
        parser.add_argument(
            "--marker",
            metavar="<event id>",
            type=int,
            help="Only events older than this one (the next page)",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        query = {
            k: v
            for k, v in (
                ("limit", parsed_args.limit),
                ("marker", parsed_args.marker),
            )
            if v is not None
        }
        path = "/apps/%s/image_events" % parse.quote(parsed_args.app, "")
        if query:
            path += "?" + parse.urlencode(query)
        events = api.call(client, "GET", path)["image_events"]
        columns = ("ID", "Image", "Action", "Reason", "Created At")
        rows = [
            (
                e["id"],
                e["image_id"],
                e["action"],
                e.get("reason"),
                e["created_at"],
            )
            for e in events
        ]
        return columns, rows
