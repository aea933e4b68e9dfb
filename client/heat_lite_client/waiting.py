"""What the rollout and promotion commands share: ``--wait`` /
``--poll``, and a command that ends by showing the thing it made or
acted on, after waiting for it to end when asked (exit code 1 when it
ended FAILED)."""

from osc_lib.command import command


def add_wait(parser, what):
    parser.add_argument(
        "--wait",
        action="store_true",
        help="Wait until the %s ends; exit 1 if it FAILED" % what,
    )
    parser.add_argument(
        "--poll",
        metavar="<seconds>",
        type=float,
        default=2.0,
        help="Seconds between two looks while waiting (default 2)",
    )


class ExitsOneWhenFailed:
    """A command mixin: ``take_action`` sets ``self._failed`` when what it
    waited for ended failed, and the command then exits 1."""

    _failed = False

    def run(self, parsed_args):
        self._failed = False
        code = super().run(parsed_args)
        return 1 if self._failed else code


class ShowsAfterWait(ExitsOneWhenFailed, command.ShowOne):
    """Subclasses give ``wait(client, thing, poll)`` -> the ended thing,
    and ``display(thing)`` -> (fields, values)."""

    def _show(self, parsed_args, thing):
        if getattr(parsed_args, "wait", False):
            client = self.app.client_manager.orchestration
            thing = self.wait(client, thing, parsed_args.poll)
            self._failed = thing["status"] == "FAILED"
        return self.display(thing)

    def wait(self, client, thing, poll):
        raise NotImplementedError

    def display(self, thing):
        raise NotImplementedError
