"""What a resource plugin may ask of the engine: one services object.

A plugin never imports the engine or the database. Everything it needs
from them comes through ``Resource.services``, an instance of
``Services`` that the engine process builds once (its
``heat_lite.engine.plugin_services.EngineServices``) and that the one
place making plugin instances (``heat_lite.engine.definitions``) passes
to each plugin's constructor:

* ``nested_stacks`` (``NestedStacks``): start and poll the operations of
  a child stack, read its outputs and members (``StackResource``), and
  a stored template's files map (``OS::Heat::Stack`` hands it on);
* ``software_configs`` / ``software_deployments`` (``ConfigStore`` /
  ``DeploymentStore``): the rows that ``/software_configs`` and
  ``/software_deployments`` serve;
* ``trust_id(stack)`` and ``trusted_session(trust_id)``: the acting
  identity of cloud calls in keystone mode (the stack's Keystone trust,
  and a keystoneauth1 session of heat_lite's trustee scoped by it);
* while one action of the plugin runs, the engine hands the plugin a copy
  of the object bound to that action (``for_action``), which adds:
  ``resource_data(name)`` (another resource's stored data, read only),
  ``write_physical_id(physical_id)`` (store the physical ID at once) and
  ``request_context`` (the caller's token, for ``needs_caller_token``).

Outside an engine process (unit tests, a plugin shown by a tool) a plugin
gets ``UNAVAILABLE``: its services are None and ``resource_data`` raises
``ServiceUnavailable``; a test passes ``Services(...)`` with fakes.

The cloud plugin package, in turn, offers the engine one object,
``CloudSide`` (loaded by name from the ``heat_lite.clouds`` entry points),
so that the engine imports no cloud plugin module.
"""

import contextlib
import copy
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol


class ServiceUnavailable(RuntimeError):
    """The plugin asked for an engine service it was not given here."""


class NestedStacks(Protocol):
    """Child stacks of the resources that own one (``StackResource``)."""

    def create(
        self, parent_id, parent_template_id, name, template, params, adopt=None
    ) -> str: ...
    def update(
        self, child_id, parent_template_id, name, template, params
    ) -> None: ...
    def delete(self, child_id) -> None: ...
    def run_action(self, child_id, action) -> None: ...
    def state(self, child_id) -> tuple | None: ...
    def arn(self, child_id) -> str | None: ...
    def outputs(self, child_id) -> dict: ...
    def output_error(self, child_id, key) -> str | None: ...
    def members(self, child_id) -> dict: ...
    def files(self, template_id) -> dict: ...


class ConfigStore(Protocol):
    """Software configs (``heat_lite.db.software_configs``)."""

    def software_config_create(self, values) -> dict: ...
    def software_config_get(self, config_id, tenant) -> dict: ...
    def software_config_delete(self, config_id, tenant) -> None: ...


class DeploymentStore(Protocol):
    """Software deployments (``heat_lite.db.software_deployments``)."""

    def software_deployment_create(self, values) -> dict: ...
    def software_deployment_get(self, deployment_id, project) -> dict: ...
    def software_deployment_update(
        self, deployment_id, project, values
    ) -> Any: ...
    def software_deployment_delete(self, deployment_id, project) -> Any: ...


class Identity(Protocol):
    """Who cloud calls act as in keystone mode (``engine.trusts``)."""

    def trust_id(self, stack) -> str | None: ...
    def trusted_session(self, trust_id) -> Any: ...


class CloudSide(Protocol):
    """What the engine asks of a cloud plugin package."""

    def acting_as(
        self, services, request=None, stack=None
    ) -> AbstractContextManager: ...
    def forget(self, trust_id) -> None: ...
    def warm_up(self) -> None:
        """Load, in the background, what the first cloud action of this
        process would otherwise load (an engine process calls it once at
        start): nothing where no cloud is configured."""

    def is_cloud_error(self, exc) -> bool:
        """True if ``exc`` is an answer of the cloud (a refusal, a
        conflict, an error state): expected, logged as one line."""


def _missing(what):
    raise ServiceUnavailable("%s is not available to plugins here" % what)


class Services:
    """The services object (see the module docstring).

    :param nested_stacks: a ``NestedStacks``.
    :param software_configs: a ``ConfigStore``.
    :param software_deployments: a ``DeploymentStore``.
    :param identity: an ``Identity`` (None: no trusts, e.g. noauth tests).
    :param resource_data: ``resource_data(stack_id, name) -> dict or
        None``, bound to the plugin's stack by ``for_action``.
    """

    def __init__(
        self,
        nested_stacks=None,
        software_configs=None,
        software_deployments=None,
        identity=None,
        resource_data=None,
    ):
        # None where not given (outside an engine process).
        self.nested_stacks: NestedStacks | None = nested_stacks
        self.software_configs: ConfigStore | None = software_configs
        self.software_deployments: DeploymentStore | None = (
            software_deployments
        )
        self.identity: Identity | None = identity
        self._resource_data = resource_data
        # Bound by for_action (None outside an action).
        self.acting_for: str | None = None
        self.request_context: Any = None
        self.write_physical_id: Callable[[str], None] | None = None

    # The acting identity ------------------------------------------------
    def trust_id(self, stack):
        """The plain trust id cloud calls for ``stack`` act through, or
        None (no trust, or no identity service here)."""
        if self.identity is None:
            return None
        return self.identity.trust_id(stack)

    def trusted_session(self, trust_id):
        """heat_lite's trustee logged in with ``trust_id``."""
        if self.identity is None:
            _missing("the acting identity")
        return self.identity.trusted_session(trust_id)

    # Bound to one action ------------------------------------------------
    def for_action(
        self, stack_id, write_physical_id=None, request_context=None
    ):
        """A copy bound to one action of a resource of ``stack_id``."""
        bound = copy.copy(self)
        bound.acting_for = stack_id
        bound.write_physical_id = write_physical_id
        bound.request_context = request_context
        return bound

    def for_call(self, request_context):
        """A copy for one RPC call of ``request_context``'s caller (a
        plugin's attributes read as the user asking for them)."""
        bound = copy.copy(self)
        bound.request_context = request_context
        return bound

    @property
    def in_action(self):
        """True while one of the plugin's actions runs."""
        return self.acting_for is not None

    def resource_data(self, name):
        """The stored data of resource ``name`` of the acting plugin's
        stack (None if it has none). Only while an action runs.

        :raises ServiceUnavailable: outside an action.
        """
        if self.acting_for is None or self._resource_data is None:
            _missing("resource data lookup")
        return self._resource_data(self.acting_for, name)


#: What a plugin made outside an engine process gets.
UNAVAILABLE = Services()


@contextlib.contextmanager
def nothing_to_act_as(*_args, **_kwargs):
    """``CloudSide.acting_as`` when no cloud plugin package is installed."""
    yield None


class NoCloud:
    """The ``CloudSide`` of an installation without cloud plugins."""

    acting_as = staticmethod(nothing_to_act_as)

    @staticmethod
    def forget(trust_id):
        return None

    @staticmethod
    def warm_up():
        return None

    @staticmethod
    def is_cloud_error(exc):
        return False
