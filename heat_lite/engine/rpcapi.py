"""The engine's public RPC client.

Other services (the REST API, or anything else on the message bus) drive
heat_lite through ``EngineAPI``. Calls wait for an answer and re-raise the
engine's typed exceptions; casts return at once.

History of ``RPC_API_VERSION``:

* 1.0 - create_stack, update_stack, delete_stack, identify_stack,
  show_stack, list_stacks, list_stack_resources, describe_stack_resource,
  list_events, list_services, resource_versions, stack_cancel_update,
  validate_template, list_template_versions, list_template_functions,
  stack_action.
"""

from heat_lite import conf
from heat_lite.common import rpc

CONF = conf.CONF
RPC_API_VERSION = "1.0"


class EngineAPI:
    """Client of the engine topic. Every method is a ``call``."""

    def __init__(self, timeout=None):
        self._client = rpc.get_client(CONF.engine.topic, RPC_API_VERSION,
                                      timeout=timeout)

    def _call(self, ctxt, method, **kwargs):
        return self._client.prepare().call(ctxt, method, **kwargs)

    def create_stack(self, ctxt, stack_name, template, params, files,
                     environment, environment_files, args):
        """Validate and store a stack, start creating it (call).

        :returns: the stack identity ``{tenant, stack_name, stack_id,
            path}``; the stack is already CREATE_IN_PROGRESS.
        """
        return self._call(ctxt, "create_stack", stack_name=stack_name,
                          template=template, params=params, files=files,
                          environment=environment,
                          environment_files=environment_files, args=args)

    def update_stack(self, ctxt, stack_identity, template, params, files,
                     environment, environment_files, args, existing=False):
        """Converge the stack onto a new template (call).

        Accepted while another operation runs; the newest wins.
        """
        return self._call(ctxt, "update_stack",
                          stack_identity=stack_identity, template=template,
                          params=params, files=files,
                          environment=environment,
                          environment_files=environment_files, args=args,
                          existing=existing)

    def delete_stack(self, ctxt, stack_identity):
        """Start deleting the stack (call; DELETE_IN_PROGRESS on return)."""
        return self._call(ctxt, "delete_stack",
                          stack_identity=stack_identity)

    def stack_cancel_update(self, ctxt, stack_identity,
                            cancel_with_rollback=True):
        """Cancel a running update, rolling back or not (call)."""
        return self._call(ctxt, "stack_cancel_update",
                          stack_identity=stack_identity,
                          cancel_with_rollback=cancel_with_rollback)

    def validate_template(self, ctxt, template, params, files, environment,
                          environment_files, show_nested=False):
        """Return Heat's validate document for a template (call)."""
        return self._call(ctxt, "validate_template", template=template,
                          params=params, files=files,
                          environment=environment,
                          environment_files=environment_files,
                          show_nested=show_nested)

    def list_template_versions(self, ctxt):
        """Return the supported template versions (call)."""
        return self._call(ctxt, "list_template_versions")

    def list_template_functions(self, ctxt, template_version,
                                with_condition_func=False):
        """Return the functions of a template version (call)."""
        return self._call(ctxt, "list_template_functions",
                          template_version=template_version,
                          with_condition_func=with_condition_func)

    def stack_action(self, ctxt, stack_identity, action):
        """Start SUSPEND, RESUME or CHECK of a stack (call)."""
        return self._call(ctxt, "stack_action",
                          stack_identity=stack_identity, action=action)

    def identify_stack(self, ctxt, stack_name):
        """Return the identity of a stack given its name or id (call)."""
        return self._call(ctxt, "identify_stack", stack_name=stack_name)

    def show_stack(self, ctxt, stack_identity, resolve_outputs=True):
        """Return the stack in Heat's engine format (call)."""
        return self._call(ctxt, "show_stack", stack_identity=stack_identity,
                          resolve_outputs=resolve_outputs)

    def list_stacks(self, ctxt, **params):
        """Return the project's stacks (call); see service.list_stacks."""
        return self._call(ctxt, "list_stacks", params=params)

    def list_stack_resources(self, ctxt, stack_identity):
        """Return the current record of every resource (call)."""
        return self._call(ctxt, "list_stack_resources",
                          stack_identity=stack_identity)

    def describe_stack_resource(self, ctxt, stack_identity, resource_name,
                                with_attr=None):
        """Return one resource with its attributes (call)."""
        return self._call(ctxt, "describe_stack_resource",
                          stack_identity=stack_identity,
                          resource_name=resource_name, with_attr=with_attr)

    def resource_versions(self, ctxt, stack_identity, resource_name):
        """Return every stored version of a resource (call)."""
        return self._call(ctxt, "resource_versions",
                          stack_identity=stack_identity,
                          resource_name=resource_name)

    def list_events(self, ctxt, stack_identity, resource_name=None,
                    **params):
        """Return stack or resource events (call)."""
        return self._call(ctxt, "list_events", stack_identity=stack_identity,
                          resource_name=resource_name, params=params)

    def list_services(self, ctxt):
        """Return the engine services and whether they are up (call)."""
        return self._call(ctxt, "list_services")


class WorkerAPI:
    """Client of the worker topic: resource checks, always cast."""

    def __init__(self):
        self._client = rpc.get_client(CONF.engine.worker_topic,
                                      RPC_API_VERSION)

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        """Ask any worker to run graph ``nodes`` of ``traversal`` (cast).

        :param nodes: [[entity_id, phase], ...].
        """
        self._client.prepare().cast(ctxt, "check_resources",
                                    stack_id=stack_id, traversal=traversal,
                                    nodes=nodes)
