"""heat_lite's own fields on heatclient's ``stack create`` and ``stack
update``: a cliff command hook (entry point groups
``openstack.cli.stack_create`` and ``openstack.cli.stack_update``) adds
the options to the command's parser and, before the command runs, makes
that command's client send the field with the stack (heatclient's
``stacks.create`` / ``stacks.update`` put every keyword argument in the
request body)."""

import functools

from cliff import hooks


def _with_field(send, key, value, *args, **fields):
    return send(*args, **{key: value}, **fields)


class StackFieldHook(hooks.CommandHook):
    """Adds the options of one body field to one heatclient command."""

    #: the ``client.stacks`` method the command sends the stack with
    method = None
    #: the body field it sends
    key = None
    #: other ``client.stacks`` methods that send it too (a dry run's)
    also = ()

    def add_options(self, parser):
        """Add the field's options to ``parser``."""
        raise NotImplementedError

    def value(self, parsed_args):
        """The field's value from the options, or None to send none."""
        raise NotImplementedError

    def get_parser(self, parser):
        self.add_options(parser)
        return parser

    def get_epilog(self):
        return ""

    def before(self, parsed_args):
        value = self.value(parsed_args)
        if value is not None:
            manager = self.cmd.app.client_manager.orchestration.stacks
            for method in (self.method,) + tuple(self.also):
                send = getattr(manager, method)
                setattr(
                    manager,
                    method,
                    functools.partial(_with_field, send, self.key, value),
                )
        return parsed_args

    def after(self, parsed_args, return_code):
        return return_code
