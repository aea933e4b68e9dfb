"""``openstack stack references``: how many stacks still use each value
of a resource property (``GET /v1/<project>/references``)."""

from urllib import parse

from osc_lib.command import command

from heat_lite_client import api


class StackReferences(command.Lister):
    """Count the stacks using each value of a resource property: in a
    current record, or only in one kept for rollback (still in use)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--type",
            metavar="<resource-type>",
            required=True,
            help="Resource type, e.g. OS::Nova::Server",
        )
        parser.add_argument(
            "--property",
            metavar="<name>",
            required=True,
            help="Property, e.g. image",
        )
        parser.add_argument(
            "--all-projects",
            action="store_true",
            help="Count in every project (admin)",
        )
        return parser

    def take_action(self, parsed_args):
        query = {"type": parsed_args.type, "property": parsed_args.property}
        if parsed_args.all_projects:
            query["all_projects"] = "true"
        client = self.app.client_manager.orchestration
        found = api.call(
            client, "GET", "/references?" + parse.urlencode(query)
        )["references"]
        columns = ("Value", "Stacks", "Current", "Retained")
        rows = [
            (r["value"], r["stacks"], r["current"], r["retained"])
            for r in found
        ]
        return columns, rows
