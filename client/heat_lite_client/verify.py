"""Verified updates from the command line.

``openstack stack verdict`` answers a running ``signal`` check.
``--verify-output`` / ``--verify-signal`` / ``--verify-timeout`` on
heatclient's own ``stack create`` and ``stack update`` come from cliff
command hooks (entry point groups ``openstack.cli.stack_create`` and
``openstack.cli.stack_update``): the hook adds the options to the
command's parser and, before the command runs, makes that command's
client send ``verify`` with the stack (heatclient's ``stacks.create`` /
``stacks.update`` put every keyword argument in the request body). So
``stack update --wait`` waits through the checks too, and fails (exit 1)
when they fail, as it does for any failed update.
"""

from osc_lib.command import command

from heat_lite_client import api, field_hook, options


class _VerifyHook(field_hook.StackFieldHook):
    """Adds the verify options to one heatclient command."""

    key = "verify"

    def add_options(self, parser):
        options.add_verify_options(parser)

    def value(self, parsed_args):
        return options.verify(parsed_args)


class CreateHook(_VerifyHook):
    method = "create"


class UpdateHook(_VerifyHook):
    method = "update"


class StackVerdict(command.Command):
    """Give a verifying stack its verdict (for its signal check)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Name or ID")
        verdict = parser.add_mutually_exclusive_group(required=True)
        verdict.add_argument(
            "--pass",
            dest="status",
            action="store_const",
            const="PASS",
            help="The checks passed: the update completes",
        )
        verdict.add_argument(
            "--fail",
            dest="status",
            action="store_const",
            const="FAIL",
            help="The checks failed: the stack rolls back",
        )
        parser.add_argument(
            "--reason", metavar="<text>", help="Why (kept in the events)"
        )
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.orchestration
        stack = client.stacks.get(parsed_args.stack, resolve_outputs=False)
        body = {"status": parsed_args.status}
        if parsed_args.reason is not None:
            body["reason"] = parsed_args.reason
        api.call(
            client,
            "POST",
            "/stacks/%s/%s/verdict" % (stack.stack_name, stack.id),
            body,
        )
