"""Saved plans of a stack's updates from the command line
(``.../stacks/<name>/<id>/plans``; doc/specs/saved_plans.md).

``openstack stack plan create <stack> -t <template> [-e ...] [--parameter
...] [--existing]`` previews an update as ``stack update --dry-run``
would and saves it; ``stack plan show`` shows it again (its status says
whether it is still READY, or STALE, EXPIRED, APPLIED), ``stack plan
list`` lists them, ``stack plan apply`` runs exactly the saved update (or
fails with the server's "stale plan" when the stack changed since) and
``stack plan delete`` forgets one.
"""

from heatclient.common import http, template_utils
from heatclient.common import utils as heat_utils
from osc_lib.command import command

from heat_lite_client import api, preview

FIELDS = (
    "ID",
    "Stack Name",
    "Status",
    "Status Reason",
    "Existing",
    "Created By",
    "Created",
    "Expires",
    "Applied",
    "Applied Traversal",
)
_KEYS = (
    "id",
    "stack_name",
    "status",
    "status_reason",
    "existing",
    "created_by",
    "created_at",
    "expires_at",
    "applied_at",
    "applied_traversal",
)
_LIST = ("ID", "Status", "Created By", "Created", "Expires", "Applied")


def _stack_path(client, name_or_id):
    stack = client.stacks.get(name_or_id, resolve_outputs=False)
    return "/stacks/%s/%s/plans" % (stack.stack_name, stack.id)


def _row(plan, keys=_KEYS):
    return tuple("" if plan.get(k) is None else plan[k] for k in keys)


def _show(plan):
    """(fields, values) of a plan, with one line per change kind."""
    changes = plan.get("resource_changes")
    if changes is None:
        return FIELDS, _row(plan)
    names = {
        kind: [r.get("resource_name") for r in changes.get(kind) or []]
        for kind in preview.RESOURCE_CHANGES
    }
    return (
        FIELDS + ("Resource Changes",),
        _row(plan) + (preview.ResourcesColumn(names),),
    )


def _plan_arguments(parser):
    parser.add_argument("stack", metavar="<stack>", help="Name or ID")
    parser.add_argument("plan", metavar="<plan>", help="ID of the plan")
    return parser


def _plan_path(app, parsed_args):
    """(heatclient, path of the plan the arguments name)."""
    client = app.client_manager.orchestration
    return client, "%s/%s" % (
        _stack_path(client, parsed_args.stack),
        parsed_args.plan,
    )


class _PlanCommand(command.ShowOne):
    def get_parser(self, prog_name):
        return _plan_arguments(super().get_parser(prog_name))


class CreatePlan(command.ShowOne):
    """Preview an update of a stack and save it as a plan to review and
    apply later."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        parser.add_argument(
            "-t", "--template", metavar="<template>", help="Path to template"
        )
        parser.add_argument(
            "-e",
            "--environment",
            metavar="<environment>",
            action="append",
            help="Path to an environment (repeatable)",
        )
        parser.add_argument(
            "--parameter",
            metavar="<key=value>",
            action="append",
            help="Parameter value (repeatable)",
        )
        parser.add_argument(
            "--parameter-file",
            metavar="<key=file>",
            action="append",
            help="Parameter value read from a file (repeatable)",
        )
        parser.add_argument(
            "--existing",
            action="store_true",
            help="Keep what the plan does not change (a PATCH update)",
        )
        parser.add_argument(
            "--clear-parameter",
            metavar="<parameter>",
            action="append",
            help="Reset a parameter to its default (with --existing)",
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        files, template = template_utils.process_template_path(
            parsed_args.template,
            object_request=http.authenticated_fetcher(client),
            existing=parsed_args.existing,
        )
        env_names = []
        env_files, env = (
            template_utils.process_multiple_environments_and_files(
                env_paths=parsed_args.environment, env_list_tracker=env_names
            )
        )
        body = {
            "parameters": heat_utils.format_all_parameters(
                parsed_args.parameter,
                parsed_args.parameter_file,
                parsed_args.template,
            ),
            "existing": parsed_args.existing,
            "template": template,
            "files": dict(files, **env_files),
            "environment": env,
        }
        if env_names:
            body["environment_files"] = env_names
        if parsed_args.clear_parameter:
            body["clear_parameters"] = list(parsed_args.clear_parameter)
        path = _stack_path(client, parsed_args.stack)
        return _show(api.call(client, "POST", path, body)["plan"])


class ShowPlan(_PlanCommand):
    """Show a saved plan: its status and the changes it would make."""

    def take_action(self, parsed_args):
        client, path = _plan_path(self.app, parsed_args)
        return _show(api.call(client, "GET", path)["plan"])


class ApplyPlan(_PlanCommand):
    """Run exactly the update a plan saved (refused when the stack
    changed since: a stale plan)."""

    def take_action(self, parsed_args):
        client, path = _plan_path(self.app, parsed_args)
        return _show(api.call(client, "POST", path + "/apply")["plan"])


class DeletePlan(command.Command):
    """Delete a saved plan."""

    def get_parser(self, prog_name):
        return _plan_arguments(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        client, path = _plan_path(self.app, parsed_args)
        api.call(client, "DELETE", path)


class ListPlan(command.Lister):
    """List a stack's saved plans, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        found = api.call(
            client, "GET", _stack_path(client, parsed_args.stack)
        )["plans"]
        keys = ("id", "status", "created_by", "created_at", "expires_at")
        return _LIST, [_row(p, keys + ("applied_at",)) for p in found]
