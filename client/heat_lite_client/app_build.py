"""``openstack app push`` and ``openstack app build list|show|log|
cancel``: pushes of an app's branches and the builds they make
(``/v1/<project>/apps/<app>/pushes`` and ``.../builds``).

The build states (their order, which are final) are the server's
(``states.vocabulary(client, "build")``), never a copy kept here.
"""

import sys
import time

from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api, states

FIELDS = (
    "id",
    "app_name",
    "branch",
    "ref",
    "commit",
    "source",
    "delivery_id",
    "status",
    "status_reason",
    "builder",
    "image_id",
    "template_id",
    "stack_name",
    "stack_id",
    "traversal",
    "verification",
    "created_at",
    "started_at",
    "finished_at",
    "log_tail",
)
BRANCH_PREFIX = "refs/heads/"
# Seconds between two reads of a followed log.
FOLLOW_INTERVAL = 2.0


def _display(build):
    fields = [f for f in FIELDS if f in build]
    values = []
    for f in fields:
        value = build[f]
        if f == "verification" and value is not None:
            value = format_columns.DictColumn(value)
        values.append(value)
    return fields, values


def _builds(app):
    return "/apps/%s/builds" % app


def _build(app, build):
    return "%s/%s" % (_builds(app), build)


def _app_and_build(parser):
    parser.add_argument("app", metavar="<app>", help="App name or ID")
    parser.add_argument("build", metavar="<build>", help="Build ID")
    return parser


def _vocabulary(client):
    return states.vocabulary(client, "build")


class PushApp(command.ShowOne):
    """Push a branch's commit to an app: it is built and deployed as if
    its git server had sent the push (for git hooks and CI jobs)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("app", metavar="<app>", help="App name or ID")
        parser.add_argument(
            "--ref",
            metavar="<ref>",
            required=True,
            help="The branch pushed: refs/heads/<branch>, or the branch",
        )
        parser.add_argument(
            "--commit",
            metavar="<commit>",
            required=True,
            help="The full commit id the branch is now at (40 or 64 hex "
            "digits)",
        )
        return parser

    def take_action(self, parsed_args):
        ref = parsed_args.ref
        if not ref.startswith("refs/"):
            ref = BRANCH_PREFIX + ref
        client = self.app.client_manager.orchestration
        answer = api.call(
            client,
            "POST",
            "/apps/%s/pushes" % parsed_args.app,
            {"ref": ref, "commit": parsed_args.commit},
        )
        if "ignored" in answer:
            return ("ignored",), (answer["ignored"],)
        return _display(answer["build"])


class ListBuild(command.Lister):
    """List an app's builds, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("app", metavar="<app>", help="App name or ID")
        parser.add_argument("--branch", metavar="<branch>")
        parser.add_argument(
            "--status",
            metavar="<status>",
            action="append",
            default=[],
            help="Only builds in this state (repeat), e.g. QUEUED, "
            "DEPLOYED, FAILED",
        )
        parser.add_argument("--limit", metavar="<n>", type=int)
        parser.add_argument("--marker", metavar="<id>")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        known = _vocabulary(client)["states"]
        for status in parsed_args.status:
            if status not in known:
                raise exceptions.CommandError(
                    "--status must be one of %s" % ", ".join(known)
                )
        query = [
            (k, v)
            for k, v in (
                ("branch", parsed_args.branch),
                ("limit", parsed_args.limit),
                ("marker", parsed_args.marker),
            )
            if v is not None
        ] + [("status", s) for s in parsed_args.status]
        path = _builds(parsed_args.app)
        if query:
            path += "?" + "&".join("%s=%s" % kv for kv in query)
        listed = api.call(client, "GET", path)["builds"]
        columns = (
            "ID",
            "Branch",
            "Commit",
            "Status",
            "Image ID",
            "Created At",
            "Finished At",
        )
        rows = [
            (
                b["id"],
                b["branch"],
                b["commit"][:12],
                b["status"],
                b["image_id"],
                b["created_at"],
                b["finished_at"],
            )
            for b in listed
        ]
        return columns, rows


class ShowBuild(command.ShowOne):
    """Show a build: its push, builder, image, template, stack and
    verification, and the end of its log."""

    def get_parser(self, prog_name):
        return _app_and_build(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = _build(parsed_args.app, parsed_args.build)
        return _display(api.call(client, "GET", path)["build"])


class BuildLog(command.Command):
    """Print a build's log (while it runs too; --follow until it ends)."""

    def get_parser(self, prog_name):
        parser = _app_and_build(super().get_parser(prog_name))
        parser.add_argument(
            "--offset",
            metavar="<n>",
            type=int,
            default=0,
            help="Start at this character of the log",
        )
        parser.add_argument(
            "--follow",
            action="store_true",
            help="Keep printing what is added until the build has ended",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = _build(parsed_args.app, parsed_args.build)
        offset = parsed_args.offset
        ended = False
        while True:
            page = api.call(client, "GET", "%s/log?offset=%d" % (path, offset))
            sys.stdout.write(page["log"])
            sys.stdout.flush()
            if page["next_offset"] != offset:
                offset = page["next_offset"]
                continue
            if ended or not parsed_args.follow:
                return
            status = api.call(client, "GET", path)["build"]["status"]
            if status in _vocabulary(client)["groups"]["FINISHED"]:
                ended = True  # read once more: the last lines came with it
                continue
            time.sleep(FOLLOW_INTERVAL)


class CancelBuild(command.ShowOne):
    """Cancel a build (a queued one at once, a running one at its next
    step)."""

    def get_parser(self, prog_name):
        return _app_and_build(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = _build(parsed_args.app, parsed_args.build) + "/actions"
        answer = api.call(client, "POST", path, {"cancel": None})
        return _display(answer["build"])
