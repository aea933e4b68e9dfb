"""``openstack stack rollout ...``: one verified update over every stack
a selector matches, in batches (``POST /v1/<project>/rollouts``)."""

import sys
import time

from cliff import columns
from heatclient.common import template_utils
from heatclient.common import utils as heat_utils
from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api, options, states, waiting

FIELDS = (
    "id",
    "name",
    "status",
    "status_reason",
    "strategy",
    "counts",
    "created_at",
    "updated_at",
    "targets",
)


class TargetsColumn(columns.FormattableColumn):
    """One line per target in a table; the list itself in JSON/YAML."""

    def human_readable(self):
        return "\n".join(
            "%d %s %s%s"
            % (t["batch"], t["stack_name"], t["status"], _reason(t))
            for t in self._value
        )

    def machine_readable(self):
        return list(self._value)


def _display(rollout):
    formats = {
        "strategy": format_columns.DictColumn,
        "counts": format_columns.DictColumn,
        "targets": TargetsColumn,
    }
    fields = [f for f in FIELDS if f in rollout]
    return fields, [formats.get(f, lambda v: v)(rollout[f]) for f in fields]


def _counts(targets, order):
    found = {}
    for target in targets:
        found[target["status"]] = found.get(target["status"], 0) + 1
    return ", ".join("%d %s" % (found[s], s) for s in order if s in found)


def progress(rollout, seen, targets_vocabulary):
    """Lines saying what changed since ``seen`` (updated in place): each
    started batch's counts, the targets that ended badly (with their
    reasons), then the rollout's status.

    :param targets_vocabulary: the server's ``rollout_target`` states
        (``states.vocabulary``): their order, and which are noteworthy.
    """
    order = targets_vocabulary["states"]
    noteworthy = targets_vocabulary["groups"]["NOTEWORTHY"]
    first = order[0]
    lines = []
    canary = rollout.get("strategy", {}).get("canary", 0)
    batches = {}
    for target in rollout.get("targets", []):
        batches.setdefault(target["batch"], []).append(target)
    for batch in sorted(batches):
        targets = batches[batch]
        if all(t["status"] == first for t in targets):
            continue  # not started yet: no line for each future batch
        text = _counts(targets, order)
        if seen.get(("batch", batch)) != text:
            seen[("batch", batch)] = text
            label = "canary" if batch == 0 and canary else "batch %d" % batch
            lines.append("%s (%d): %s" % (label, len(targets), text))
        for target in targets:
            key = ("target", target["stack_id"])
            if target["status"] in noteworthy and key not in seen:
                seen[key] = target["status"]
                lines.append(
                    "  %s %s%s"
                    % (
                        target["stack_name"],
                        target["status"],
                        _reason(target),
                    )
                )
    status = (rollout["status"], rollout.get("status_reason"))
    if seen.get("status") != status:
        seen["status"] = status
        lines.append(
            "rollout %s %s%s" % (rollout["name"], status[0], _reason(rollout))
        )
    return lines


def _reason(thing):
    return (
        ": %s" % thing["status_reason"] if thing.get("status_reason") else ""
    )


def wait(client, rollout, poll, out=None, since=None):
    """Poll the rollout until it ends, printing its progress; the ended
    rollout. (A PAUSED one has not ended: it waits for a resume.)

    ``since``: the rollout as it was before the action waited for (a
    cancel, a rollback): only what changed since then is printed, not
    again the batches and targets that a ``create --wait`` printed.
    """
    out = out or sys.stdout
    seen = {}
    targets = states.vocabulary(client, "rollout_target")
    running = states.vocabulary(client, "rollout")["groups"]["ACTIVE"]
    if since is not None:
        progress(since, seen, targets)
    while True:
        lines = progress(rollout, seen, targets)
        if lines:
            out.write("\n".join(lines) + "\n")
            out.flush()
        if rollout["status"] not in running:
            return rollout
        time.sleep(poll)
        rollout = api.call(client, "GET", "/rollouts/%s" % rollout["id"])[
            "rollout"
        ]


def _add_wait(parser):
    waiting.add_wait(parser, "rollout (printing its progress per batch)")


class _ShowsRollout(waiting.ShowsAfterWait):
    """A command that ends by showing a rollout (``--wait`` if it has
    the option)."""

    #: the rollout before the command acted on it (see ``wait``)
    before = None

    def wait(self, client, rollout, poll):
        return wait(client, rollout, poll, since=self.before)

    def display(self, rollout):
        return _display(rollout)


class CreateRollout(_ShowsRollout):
    """Start a rollout: one verified update over the matching stacks."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<name>", help="Rollout name")
        options.add_selector_options(parser, prefix="match-")
        group = parser.add_argument_group("update (a PATCH of each stack)")
        group.add_argument(
            "--parameter",
            metavar="<key=value>",
            action="append",
            default=[],
            help="A new parameter value (repeat)",
        )
        group.add_argument(
            "-t",
            "--template",
            metavar="<template>",
            help="A new template (path or URL)",
        )
        group.add_argument(
            "-e",
            "--environment",
            metavar="<environment>",
            action="append",
            default=[],
            help="An environment (repeat)",
        )
        group.add_argument(
            "--clear-parameter",
            metavar="<name>",
            action="append",
            default=[],
            help="Go back to a parameter's default (repeat)",
        )
        options.add_verify_options(parser, required=True)
        group = parser.add_argument_group("strategy")
        for flag, default, text in (
            ("--canary", 0, "Targets updated first, alone (default 0)"),
            ("--batch-size", 1, "Targets updated at once (default 1)"),
            (
                "--max-failures",
                0,
                "Failed targets tolerated before stopping (default 0)",
            ),
        ):
            group.add_argument(
                flag, metavar="<n>", type=int, default=default, help=text
            )
        _add_wait(parser)
        return parser

    def _update(self, parsed_args):
        update = {}
        if parsed_args.parameter:
            update["parameters"] = heat_utils.format_parameters(
                parsed_args.parameter
            )
        files = {}
        if parsed_args.template:
            tpl_files, template = template_utils.process_template_path(
                parsed_args.template
            )
            update["template"] = template
            files.update(tpl_files)
        if parsed_args.environment:
            env_files, env = (
                template_utils.process_multiple_environments_and_files(
                    env_paths=parsed_args.environment
                )
            )
            update["environment"] = env
            files.update(env_files)
        if files:
            update["files"] = files
        if parsed_args.clear_parameter:
            update["clear_parameters"] = list(parsed_args.clear_parameter)
        if not update:
            raise exceptions.CommandError(
                "Nothing to update: give --parameter, --template, "
                "--environment or --clear-parameter"
            )
        return update

    def take_action(self, parsed_args):
        body = {
            "name": parsed_args.name,
            "selector": options.selector(parsed_args),
            "update": self._update(parsed_args),
            "verify": options.verify(parsed_args),
            "strategy": {
                "canary": parsed_args.canary,
                "batch_size": parsed_args.batch_size,
                "max_failures": parsed_args.max_failures,
            },
        }
        if body["verify"] is None:
            raise exceptions.CommandError(
                "A rollout needs checks: --verify-output and/or "
                "--verify-signal"
            )
        client = self.app.client_manager.orchestration
        rollout = api.call(client, "POST", "/rollouts", body)["rollout"]
        return self._show(parsed_args, rollout)


class ListRollout(command.Lister):
    """List the project's rollouts, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.add_page_options(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = "/rollouts" + options.page_query(parsed_args)
        listed = api.call(client, "GET", path)["rollouts"]
        columns = ("ID", "Name", "Status", "Counts", "Created At")
        rows = [
            (
                r["id"],
                r["name"],
                r["status"],
                format_columns.DictColumn(
                    {s: n for s, n in r["counts"].items() if n}
                ),
                r["created_at"],
            )
            for r in listed
        ]
        return columns, rows


class ShowRollout(_ShowsRollout):
    """Show a rollout and its targets."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("rollout", metavar="<rollout>", help="Name or ID")
        _add_wait(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        rollout = api.find_rollout(client, parsed_args.rollout)
        return self._show(parsed_args, rollout)


class _RolloutAction(_ShowsRollout):
    """POST one action to a rollout and show it."""

    action = None
    waits = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("rollout", metavar="<rollout>", help="Name or ID")
        if self.waits:
            _add_wait(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        self.before = api.find_rollout(client, parsed_args.rollout)
        rollout = api.call(
            client,
            "POST",
            "/rollouts/%s/actions" % self.before["id"],
            {self.action: None},
        )["rollout"]
        return self._show(parsed_args, rollout)


class PauseRollout(_RolloutAction):
    """Pause a rollout: no new batch starts until it is resumed."""

    action = "pause"


class ResumeRollout(_RolloutAction):
    """Resume a paused rollout."""

    action = "resume"


class CancelRollout(_RolloutAction):
    """Cancel a rollout: no new batch starts; the batch in flight ends."""

    action = "cancel"
    waits = True


class RollbackRollout(_RolloutAction):
    """Cancel a rollout and update its SUCCEEDED targets back."""

    action = "rollback"
    waits = True


class DeleteRollout(command.Command):
    """Delete finished rollouts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "rollouts", metavar="<rollout>", nargs="+", help="Name or ID"
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        for name_or_id in parsed_args.rollouts:
            rollout_id = api.find_rollout(client, name_or_id)["id"]
            api.call(client, "DELETE", "/rollouts/%s" % rollout_id)
