"""``openstack stack promote`` and ``openstack stack promotion ...``: a
tested stack's last COMPLETE template onto another stack, behind a gate
(``POST /v1/<project>/promotions``), its provenance and its undo."""

import sys
import time

from heatclient.common import template_utils
from heatclient.common import utils as heat_utils
from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api, options, preview, states, waiting

FIELDS = (
    "id",
    "status",
    "status_reason",
    "source",
    "target",
    "parameters",
    "environment",
    "reset_parameters",
    "verify",
    "rolled_back",
    "overtaken_by",
    "user",
    "created_at",
    "finished_at",
)
_DICTS = ("source", "target", "parameters", "environment", "verify")


def _display(promotion):
    fields = [f for f in FIELDS if f in promotion]
    values = [
        format_columns.DictColumn(promotion[f] or {})
        if f in _DICTS
        else promotion[f]
        for f in fields
    ]
    return fields, values


def wait(client, promotion, poll, out=None):
    """Poll the promotion until it is no longer IN_PROGRESS, printing
    each change of its status; the finished promotion."""
    out = out or sys.stdout
    seen = None
    active = states.vocabulary(client, "promotion")["groups"]["ACTIVE"]
    while True:
        now = (promotion["status"], promotion["status_reason"])
        if now != seen:
            out.write("promotion %s %s: %s\n" % (promotion["id"], *now))
            out.flush()
            seen = now
        if promotion["status"] not in active:
            return promotion
        time.sleep(poll)
        promotion = api.call(
            client, "GET", "/promotions/%s" % promotion["id"]
        )["promotion"]


def _add_wait(parser):
    waiting.add_wait(parser, "promotion")


class _ShowsPromotion(waiting.ShowsAfterWait):
    def wait(self, client, promotion, poll):
        return wait(client, promotion, poll)

    def display(self, promotion):
        return _display(promotion)


def request(parsed_args):
    """The body of ``POST /promotions`` from the options."""
    body = {
        "source": {"stack": parsed_args.source},
        "target": {"stack": parsed_args.target},
    }
    if parsed_args.target_project:
        body["target"]["project"] = parsed_args.target_project
    if parsed_args.parameter:
        body["parameters"] = heat_utils.format_parameters(
            parsed_args.parameter
        )
    if parsed_args.environment:
        _files, env = template_utils.process_multiple_environments_and_files(
            env_paths=parsed_args.environment
        )
        body["environment"] = env
    if parsed_args.reset_parameter:
        body["reset_parameters"] = list(parsed_args.reset_parameter)
    verify = options.verify(parsed_args)
    if verify is not None:
        body["verify"] = verify
    return body


class PromoteStack(_ShowsPromotion):
    """Promote a stack's last COMPLETE template onto a target stack
    (created if missing, else updated in place), behind the checks."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("source", metavar="<source>", help="Name or ID")
        parser.add_argument(
            "target", metavar="<target>", help="Name or ID (made if missing)"
        )
        parser.add_argument(
            "--target-project",
            metavar="<project-id>",
            help="The target's project (default: this one)",
        )
        parser.add_argument(
            "--parameter",
            metavar="<key=value>",
            action="append",
            default=[],
            help="A parameter laid over the source's (repeat)",
        )
        parser.add_argument(
            "-e",
            "--environment",
            metavar="<environment>",
            action="append",
            default=[],
            help="An environment laid over the source's (repeat)",
        )
        parser.add_argument(
            "--reset-parameter",
            metavar="<name>",
            action="append",
            default=[],
            help="Leave a parameter to the template's default (repeat)",
        )
        options.add_verify_options(parser)
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Show what the promotion would change (parameters, "
            "the target's overlays it would drop, resources) and change "
            "nothing",
        )
        _add_wait(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        if parsed_args.dry_run:
            answer = api.call(
                client, "POST", "/promotions/preview", request(parsed_args)
            )
            return preview.display(answer["preview"])
        promotion = api.call(
            client, "POST", "/promotions", request(parsed_args)
        )["promotion"]
        return self._show(parsed_args, promotion)


class ListPromotion(command.Lister):
    """List the promotions from or into this project (or of one stack),
    newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--stack",
            metavar="<stack>",
            help="Only those that changed this stack (name or ID)",
        )
        options.add_page_options(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        if parsed_args.stack and (
            parsed_args.limit is not None or parsed_args.marker is not None
        ):
            raise exceptions.CommandError(
                "--limit and --marker page the project's list, not --stack's"
            )
        if parsed_args.stack:
            stack = client.stacks.get(parsed_args.stack)
            path = "/stacks/%s/%s/promotions" % (stack.stack_name, stack.id)
        else:
            path = "/promotions" + options.page_query(parsed_args)
        listed = api.call(client, "GET", path)["promotions"]
        columns = ("ID", "Status", "Source", "Target", "Created At")
        rows = [
            (
                p["id"],
                p["status"],
                p["source"]["stack_name"],
                "%s/%s" % (p["target"]["project"], p["target"]["stack_name"]),
                p["created_at"],
            )
            for p in listed
        ]
        return columns, rows


class _OnePromotion(_ShowsPromotion):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("promotion", metavar="<promotion>", help="ID")
        _add_wait(parser)
        return parser


class ShowPromotion(_OnePromotion):
    """Show a promotion."""

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        promotion = api.call(
            client, "GET", "/promotions/%s" % parsed_args.promotion
        )["promotion"]
        return self._show(parsed_args, promotion)


def confirm_delete(promotion, stdin=None, stderr=None):
    """Ask before a rollback that deletes the stack the promotion made.

    Only a terminal can answer: without one (a script, a pipe) the
    rollback is refused unless ``--yes`` said it beforehand. Raises
    CommandError unless the answer is yes.
    """
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    target = promotion["target"]
    what = (
        "Rolling back promotion %s will delete stack %s (project %s), "
        "which the promotion created"
        % (promotion["id"], target.get("stack_name"), target.get("project"))
    )
    if not stdin.isatty():
        raise exceptions.CommandError(
            "%s: not confirmed (no terminal to ask on); nothing done. "
            "Add --yes to roll it back." % what
        )
    stderr.write("%s. Are you sure [y/N]? " % what)
    stderr.flush()
    try:
        answer = stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    if not answer.strip().lower().startswith("y"):
        raise exceptions.CommandError("Not confirmed: nothing done")


def _deletes_its_target(promotion, vocabulary):
    """True if rolling the promotion back would delete its target: one it
    created, not undone yet (a failed promotion undid itself).

    :param vocabulary: the server's ``promotion`` states.
    """
    undone = vocabulary["groups"]["UNDONE"]
    return bool(promotion["target"].get("created")) and (
        promotion["status"] not in undone
    )


class RollbackPromotion(_OnePromotion):
    """Put a promotion's target back on what it had before it (a target
    the promotion created is deleted: asks first, unless --yes)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "-y",
            "--yes",
            action="store_true",
            help="Do not ask before deleting a target the promotion "
            "created (needed without a terminal)",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        if not parsed_args.yes:
            current = api.call(
                client, "GET", "/promotions/%s" % parsed_args.promotion
            )["promotion"]
            vocabulary = states.vocabulary(client, "promotion")
            if _deletes_its_target(current, vocabulary):
                confirm_delete(current)
        promotion = api.call(
            client,
            "POST",
            "/promotions/%s/actions" % parsed_args.promotion,
            {"rollback": None},
        )["promotion"]
        return self._show(parsed_args, promotion)
