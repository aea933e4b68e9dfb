"""``openstack app retention show|set|unset``: the project's default
image retention, for its apps without a ``retention`` of their own
(``/v1/<project>/retention``). ``set`` and ``unset`` change only the
keys given (the default is read, changed and written back whole);
``unset`` without a key removes the whole default.
"""

from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api

KEYS = ("keep_last", "grace", "mode")
FIELDS = KEYS + ("project", "project_default", "options", "updated_at")


def _display(shown):
    """The effective keep_last, grace and mode first, then what the
    project set and the deployment's options they come from."""
    row = dict(shown["effective"], **shown)
    for key in ("project_default", "options"):
        row[key] = format_columns.DictColumn(shown[key])
    return FIELDS, [row.get(f) for f in FIELDS]


def _show(client):
    return api.call(client, "GET", "/retention")["retention"]


def _write(client, own):
    """Make ``own`` the project's whole default (none left: unset it)."""
    if own:
        body = {"retention": own}
        return api.call(client, "PUT", "/retention", body)["retention"]
    api.call(client, "DELETE", "/retention")
    return _show(client)


class ShowRetention(command.ShowOne):
    """Show the project's default image retention: the policy of its
    apps without their own, what the project set, and the deployment's
    options."""

    def take_action(self, parsed_args):
        return _display(_show(self.app.client_manager.orchestration))


class SetRetention(command.ShowOne):
    """Set keys of the project's default image retention (the others
    stay as they are)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--keep-last",
            metavar="<n>",
            type=int,
            help="Newest deployed images of each app branch kept even when "
            "nothing names them",
        )
        parser.add_argument(
            "--grace",
            metavar="<seconds>",
            type=int,
            help="Seconds an unneeded image stays hidden before it is deleted",
        )
        parser.add_argument(
            "--mode",
            choices=("report", "hide", "delete"),
            help="report: record only; hide: hide, never delete; delete: "
            "hide, then delete after the grace",
        )
        return parser

    def take_action(self, parsed_args):
        given = {
            k: getattr(parsed_args, k)
            for k in KEYS
            if getattr(parsed_args, k) is not None
        }
        if not given:
            raise exceptions.CommandError(
                "Nothing to set: give --keep-last, --grace or --mode"
            )
        client = self.app.client_manager.orchestration
        own = dict(_show(client)["project_default"], **given)
        return _display(_write(client, own))


class UnsetRetention(command.Command):
    """Unset keys of the project's default image retention (they follow
    the deployment's options again); without one, the whole default."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        for key in KEYS:
            parser.add_argument(
                "--" + key.replace("_", "-"),
                action="store_true",
                help="Unset %s" % key,
            )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        keys = [k for k in KEYS if getattr(parsed_args, k)]
        if not keys:
            api.call(client, "DELETE", "/retention")
            return
        own = _show(client)["project_default"]
        if not set(keys) & set(own):
            raise exceptions.CommandError(
                "The project's default sets none of %s" % ", ".join(keys)
            )
        _write(client, {k: v for k, v in own.items() if k not in keys})
