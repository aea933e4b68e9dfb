"""``openstack stack query``: the stacks a selector matches."""

from osc_lib.cli import format_columns
from osc_lib.command import command

from heat_lite_client import api, options


class QueryStack(command.Lister):
    """Find the stacks matching a selector, with the values that matched."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.add_selector_options(parser)
        parser.add_argument(
            "--all-projects",
            action="store_true",
            help="Search every project (admin)",
        )
        return parser

    def take_action(self, parsed_args):
        body = {"selector": options.selector(parsed_args)}
        if parsed_args.all_projects:
            body["all_projects"] = True
        client = self.app.client_manager.orchestration
        stacks = api.call(client, "POST", "/stacks/query", body)["stacks"]
        columns = ["ID", "Stack Name", "Stack Status", "Matched"]
        keys = ["id", "stack_name", "stack_status", "matched"]
        if parsed_args.all_projects:
            columns.insert(1, "Project")
            keys.insert(1, "project")
        rows = [
            [
                format_columns.DictColumn(s[k]) if k == "matched" else s[k]
                for k in keys
            ]
            for s in stacks
        ]
        return columns, rows
