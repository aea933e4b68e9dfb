"""``openstack app create|list|show|set|delete``: apps, a git source
built into images deployed to a stack per branch
(``/v1/<project>/apps``)."""

from heatclient.common import template_utils
from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api, options

FIELDS = (
    "id",
    "name",
    "source",
    "builder",
    "image_parameter",
    "stacks",
    "verify",
    "webhook",
    "version",
    "created_at",
    "updated_at",
)


def _display(app):
    formats = {
        "source": format_columns.DictColumn,
        "builder": format_columns.DictColumn,
        "stacks": format_columns.DictColumn,
        "verify": format_columns.DictColumn,
    }
    fields = [f for f in FIELDS if f in app]
    return fields, [
        formats.get(f, lambda v: v)(app[f]) if app[f] is not None else None
        for f in fields
    ]


def _pairs(texts, what, value=str):
    result = {}
    for text in texts:
        key, sep, val = text.partition("=")
        if not sep or not key:
            raise exceptions.CommandError(
                "%s must be KEY=VALUE, got %r" % (what, text)
            )
        result[key] = value(val)
    return result


def _add_options(parser, create):
    """The options of ``create`` (``set``: every one optional)."""
    parser.add_argument(
        "--source-url",
        metavar="<url>",
        required=create,
        help="The git repository (which URLs are allowed is the "
        "operator's [apps] allowed_sources)",
    )
    parser.add_argument(
        "--branch",
        metavar="<pattern>",
        action="append",
        default=[],
        help="A branch to follow, or a shell glob of branches (repeat; "
        "at least one on create; on set, replaces the list)",
    )
    parser.add_argument(
        "--builder",
        metavar="<name>",
        required=create,
        help="The builder: artifact, filesystem or command",
    )
    parser.add_argument(
        "--builder-option",
        metavar="<key=value>",
        action="append",
        default=[],
        help="An option of the builder, JSON when it parses as JSON "
        "(repeat; on set, replaces the options)",
    )
    parser.add_argument(
        "-t",
        "--template",
        metavar="<template>",
        required=create,
        help="The template of the app's stacks (path or URL)",
    )
    parser.add_argument(
        "-e",
        "--environment",
        metavar="<environment>",
        action="append",
        default=[],
        help="An environment (repeat)",
    )
    parser.add_argument(
        "--image-parameter",
        metavar="<name>",
        required=create,
        help="The template parameter that takes the built image",
    )
    parser.add_argument(
        "--stack",
        metavar="<branch=stack>",
        action="append",
        default=[],
        help="Adopt an existing stack for a branch (repeat); other "
        "branches get <app>-<branch>",
    )
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument(
        "--webhook-secret",
        metavar="<secret>",
        help="The secret git servers sign their pushes with (at least "
        "16 characters; stored encrypted, never shown)",
    )
    if not create:
        secret.add_argument(
            "--no-webhook-secret",
            action="store_true",
            help="Remove the webhook secret",
        )
        parser.add_argument(
            "--no-verify",
            action="store_true",
            help="Remove the verification",
        )
    options.add_verify_options(parser)


def request(parsed_args, create=True):
    """The body the options describe (``set``: only what was given)."""
    body = {}
    if getattr(parsed_args, "name", None) and create:
        body["name"] = parsed_args.name
    if parsed_args.source_url or parsed_args.branch:
        if not (parsed_args.source_url and parsed_args.branch):
            raise exceptions.CommandError(
                "--source-url and --branch go together"
            )
        body["source"] = {
            "url": parsed_args.source_url,
            "branches": list(parsed_args.branch),
        }
    if parsed_args.builder:
        body["builder"] = {
            "name": parsed_args.builder,
            "options": _pairs(
                parsed_args.builder_option, "--builder-option", options.scalar
            ),
        }
    elif parsed_args.builder_option:
        raise exceptions.CommandError("--builder-option needs --builder")
    files = {}
    if parsed_args.template:
        tpl_files, body["template"] = template_utils.process_template_path(
            parsed_args.template
        )
        files.update(tpl_files)
    if parsed_args.environment:
        env_files, body["environment"] = (
            template_utils.process_multiple_environments_and_files(
                env_paths=parsed_args.environment
            )
        )
        files.update(env_files)
    if files:
        body["files"] = files
    if parsed_args.image_parameter:
        body["image_parameter"] = parsed_args.image_parameter
    if parsed_args.stack:
        body["stacks"] = _pairs(parsed_args.stack, "--stack")
    if parsed_args.webhook_secret:
        body["webhook_secret"] = parsed_args.webhook_secret
    elif getattr(parsed_args, "no_webhook_secret", False):
        body["webhook_secret"] = None
    verify = options.verify(parsed_args)
    if verify is not None:
        body["verify"] = verify
    elif getattr(parsed_args, "no_verify", False):
        body["verify"] = None
    return body


def _path(app):
    return "/apps/%s" % app


class CreateApp(command.ShowOne):
    """Create an app: a git source, a builder, a template per branch."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<name>", help="App name")
        _add_options(parser, create=True)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        return _display(
            api.call(client, "POST", "/apps", request(parsed_args))["app"]
        )


class ListApp(command.Lister):
    """List the project's apps."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.add_page_options(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = "/apps" + options.page_query(parsed_args)
        listed = api.call(client, "GET", path)["apps"]
        columns = ("ID", "Name", "Source", "Branches", "Builder", "Created At")
        rows = [
            (
                a["id"],
                a["name"],
                a["source"]["url"],
                format_columns.ListColumn(a["source"]["branches"]),
                a["builder"]["name"],
                a["created_at"],
            )
            for a in listed
        ]
        return columns, rows


class ShowApp(command.ShowOne):
    """Show an app."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("app", metavar="<app>", help="Name or ID")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        return _display(api.call(client, "GET", _path(parsed_args.app))["app"])


class SetApp(command.ShowOne):
    """Change an app: only the options given change."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("app", metavar="<app>", help="Name or ID")
        _add_options(parser, create=False)
        return parser

    def take_action(self, parsed_args):
        body = request(parsed_args, create=False)
        if not body:
            raise exceptions.CommandError("Nothing to change")
        client = self.app.client_manager.orchestration
        return _display(
            api.call(client, "PATCH", _path(parsed_args.app), body)["app"]
        )


class DeleteApp(command.Command):
    """Delete apps (their stacks stay)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "apps", metavar="<app>", nargs="+", help="Name or ID (repeat)"
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        for app in parsed_args.apps:
            api.call(client, "DELETE", _path(app))
