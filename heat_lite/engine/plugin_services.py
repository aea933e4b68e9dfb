"""The engine's side of the plugin contract: the one services object an
engine process hands its plugins.

``EngineServices`` implements ``heat_lite.resources.services.Services``
with the engine's parts (child stacks through ``traversal.nested``, the
software config and deployment rows of ``db``, the acting identity of
``engine.trusts``, resource data of ``db.signals``). ``EngineProcess``
builds one, after the ``StackOps`` its child stacks start operations
with, and gives it to everything that makes plugin instances
(``definitions.plugin_for``). What the engine asks of the cloud plugins
is ``engine.cloud``.
"""

from heat_lite.db import signals as db_signals
from heat_lite.db import software_configs, software_deployments
from heat_lite.engine import trusts
from heat_lite.engine.traversal import nested
from heat_lite.resources import services


class _Trusts:
    """``services.Identity``: a stack's Keystone trust (engine.trusts)."""

    @staticmethod
    def trust_id(stack):
        if not stack.get("id"):
            return None
        return trusts.for_stack(stack["id"], stack.get("trust"))

    @staticmethod
    def trusted_session(trust_id):
        return trusts.trusted_session(trust_id)


class EngineServices(services.Services):
    """The services of one engine process.

    :param stack_ops: the process's ``traversal.ops.StackOps``: child
        stacks' operations start through it.
    """

    def __init__(self, stack_ops):
        super().__init__(
            # The child stacks make plugins of their own resources (their
            # members' references): with these same services.
            nested_stacks=nested.NestedStacks(stack_ops, self),
            software_configs=software_configs,
            software_deployments=software_deployments,
            identity=_Trusts(),
            resource_data=db_signals.resource_data_by_name,
        )
