"""A stack's update semantics and its traversals from the command line.

``openstack stack traversal list <stack>`` shows the running, queued and
recent traversals (``GET .../traversals``): who asked, the action, the
state (QUEUED, RUNNING, COMPLETE, FAILED, SUPERSEDED, CANCELLED), which
traversal superseded it and when. ``stack traversal cancel <stack> <id>``
cancels a queued update. ``stack semantics set <stack> converge|queue|
reject`` sets what an update does while another runs (the
``{"update_semantics": ...}`` action), and ``--update-semantics`` on
heatclient's own ``stack create`` / ``stack update`` sends the same
choice with the stack (cliff command hooks, as ``--verify-*`` do).
"""

from osc_lib.command import command

from heat_lite_client import api, field_hook

SEMANTICS = ("converge", "queue", "reject")
COLUMNS = (
    "ID",
    "Action",
    "State",
    "Requested By",
    "Superseded By",
    "Created",
    "Started",
    "Finished",
    "Reason",
)
_KEYS = (
    "id",
    "action",
    "state",
    "requested_by",
    "superseded_by",
    "created_at",
    "started_at",
    "finished_at",
    "status_reason",
)


def _stack_path(client, name_or_id):
    stack = client.stacks.get(name_or_id, resolve_outputs=False)
    return "/stacks/%s/%s" % (stack.stack_name, stack.id)


def row(traversal):
    """A traversal as a table row (missing values empty)."""
    return tuple(traversal.get(key) or "" for key in _KEYS)


class ListTraversal(command.Lister):
    """List a stack's running, queued and recent traversals (newest
    first)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = _stack_path(client, parsed_args.stack) + "/traversals"
        found = api.call(client, "GET", path)["traversals"]
        return COLUMNS, [row(t) for t in found]


class CancelTraversal(command.ShowOne):
    """Cancel a stack's queued update."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        parser.add_argument(
            "traversal", metavar="<traversal>", help="ID of the queued one"
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        path = "%s/traversals/%s" % (
            _stack_path(client, parsed_args.stack),
            parsed_args.traversal,
        )
        found = api.call(client, "DELETE", path)["traversal"]
        return COLUMNS, row(found)


class SetSemantics(command.Command):
    """Set what an update of the stack does while another operation
    runs: converge (take it over), queue (wait its turn) or reject
    (409)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        parser.add_argument("semantics", choices=SEMANTICS)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        api.call(
            client,
            "POST",
            _stack_path(client, parsed_args.stack) + "/actions",
            {"update_semantics": parsed_args.semantics},
        )


class _SemanticsHook(field_hook.StackFieldHook):
    """Adds ``--update-semantics`` to one heatclient command."""

    key = "update_semantics"

    def add_options(self, parser):
        parser.add_argument(
            "--update-semantics",
            choices=SEMANTICS,
            help="heat_lite: what an update does while another operation "
            "runs on the stack (default converge)",
        )

    def value(self, parsed_args):
        return getattr(parsed_args, "update_semantics", None)


class CreateHook(_SemanticsHook):
    method = "create"


class UpdateHook(_SemanticsHook):
    method = "update"
