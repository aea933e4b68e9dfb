"""Nested stacks for resource plugins (template resources, groups).

A plugin that owns a child stack calls these methods in the engine process
that runs its action: they store or converge the child like any stack
(one traversal, casts to the workers) and return at once; the plugin then
polls the child's state. No engine ever waits on another over RPC, so
nesting cannot deadlock however few workers there are, and a child is a
real stack (``parent`` set, reachable by id, listed with show_nested).
"""

import base64
import json
import uuid

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.db import templates as db_templates
from heat_lite.engine import definitions, limits, validation
from heat_lite.engine.template import registry as type_registry
from heat_lite.engine.traversal import ops
from heat_lite.resources import services as plugin_services

CONF = conf.CONF
_ARN = "arn:openstack:heat::%s:stacks/%s/%s"


def _short_id():
    return base64.b32encode(uuid.uuid4().bytes).decode()[:12].lower()


def child_environment(environment, resource_name, params):
    """The environment of resource ``resource_name``'s child stack:
    ``parameter_defaults`` and the registry (with this resource's own
    entries) of the parent's, and ``params`` as its parameters."""
    child_env = type_registry.nested_environment(environment, resource_name)
    child_env["parameters"] = dict(params)
    return child_env


def referenced_files(files, text):
    """The entries of ``files`` that ``text`` names, directly or through
    the content of another named entry (a nested template that uses a
    further template or ``get_file``), so that every level of a tree
    finds the files of the levels below it."""
    found = {}
    pending = [text]
    while pending:
        chunk = pending.pop()
        for key, value in files.items():
            if key not in found and key in chunk:
                found[key] = value
                pending.append(
                    value
                    if isinstance(value, str)
                    else json.dumps(value, default=str)
                )
    return found


class NestedStacks:
    """Child-stack operations, bound to the engine's StackOps
    (``resources.services.NestedStacks``).

    :param stack_ops: the process's ``traversal.ops.StackOps``.
    :param services: the services object this is part of: the plugins of
        a child's resources are made with it.
    """

    def __init__(self, stack_ops, services):
        self.ops: ops.StackOps = stack_ops
        self.services: plugin_services.Services = services

    @staticmethod
    def _child_inputs(
        parent, parent_template_id, resource_name, template, params
    ):
        """The child's environment and files, from its parent's.

        ``parameter_defaults`` and the resource registry (with the
        per-resource overrides for this resource) propagate; ``files``
        keeps only the entries the child template mentions, so a deep tree
        does not store the whole files map once per nested stack.
        """
        bound = definitions.get(
            parent_template_id, definitions.stack_info(parent)
        )
        child_env = child_environment(bound.environment, resource_name, params)
        text = json.dumps(template, default=str) + json.dumps(
            child_env["resource_registry"], default=str
        )
        return child_env, referenced_files(bound.files or {}, text)

    @staticmethod
    def files(template_id):
        """The ``files`` map stored with the template ``template_id``
        (for OS::Heat::Stack, which hands it to the remote stack)."""
        return db_templates.raw_template_get(template_id)["files"] or {}

    def create(
        self,
        parent_id,
        parent_template_id,
        resource_name,
        template,
        params,
        adopt=None,
    ):
        """Store and start creating a child stack; return its id.

        :param adopt: {name: abandon data entry}: adopt the child's
            resources instead of creating them (action ADOPT).

        :raises StackValidationFailed: for a bad child template, or
            nesting deeper than ``max_nested_stack_depth``.
        """
        parent = db_stacks.stack_get(parent_id)
        depth = parent["nested_depth"] + 1
        if depth > CONF.max_nested_stack_depth:
            raise exception.StackValidationFailed(
                msg="Recursion depth exceeds %d." % CONF.max_nested_stack_depth
            )
        env, files = self._child_inputs(
            parent, parent_template_id, resource_name, template, params
        )
        stack_id = str(uuid.uuid4())
        action = Action.CREATE if adopt is None else Action.ADOPT
        name = "%s-%s-%s" % (parent["name"], resource_name, _short_id())
        info = {"name": name, "id": stack_id, "project_id": parent["tenant"]}
        env = validation.environment(env, None)
        bound = validation.bind(template, env, files, info, depth)
        limits.check_child(parent, bound)
        stack = db_stacks.stack_create(
            {
                "id": stack_id,
                "name": name,
                "tenant": parent["tenant"],
                "username": parent["username"],
                "owner_id": parent_id,
                # The tree acts through its root's trust (engine.trusts).
                "trust_id": parent["trust_id"],
                "parent_resource_name": resource_name,
                "nested_depth": depth,
                "action": action,
                "status": Status.IN_PROGRESS,
                "status_reason": "Stack %s started" % action,
                "current_traversal": "",
                "timeout": parent["timeout"],
                "disable_rollback": True,
                "tags": None,
            },
            template,
            env,
            files,
        )
        self.ops.start(
            stack,
            action,
            bound,
            goal_template_id=stack["raw_template_id"],
            adopt=adopt,
        )
        return stack_id

    def update(
        self, stack_id, parent_template_id, resource_name, template, params
    ):
        """Converge the child onto a new template, on the same stack id."""
        stack = db_stacks.stack_get(stack_id)
        parent = db_stacks.stack_get(stack["owner_id"])
        env, files = self._child_inputs(
            parent, parent_template_id, resource_name, template, params
        )
        env = validation.environment(env, None)
        bound = validation.bind(
            template,
            env,
            files,
            definitions.stack_info(stack),
            stack["nested_depth"],
        )
        self.ops.start(
            stack, Action.UPDATE, bound, new_template=(template, env, files)
        )

    @staticmethod
    def arn(stack_id):
        """The stack's ARN, as get_resource of a template resource gives
        it and ``GET /stacks/<arn>`` resolves it."""
        stack = db_stacks.stack_get(stack_id)
        return _ARN % (stack["tenant"], stack["name"], stack["id"])

    def delete(self, stack_id):
        """Start deleting the child; False if it is already gone."""
        try:
            stack = db_stacks.stack_get(stack_id, show_deleted=False)
        except exception.StackNotFound:
            return False
        self.ops.start(stack, Action.DELETE)
        return True

    def run_action(self, stack_id, action):
        """Suspend, resume or check the child."""
        self.ops.run_action(db_stacks.stack_get(stack_id), action)

    @staticmethod
    def state(stack_id):
        """(action, status, reason) of the child, or None if purged."""
        try:
            stack = db_stacks.stack_get(stack_id)
        except exception.StackNotFound:
            return None
        return stack["action"], stack["status"], stack["status_reason"]

    def outputs(self, stack_id):
        """{key: value} of the child's outputs (errors give None)."""
        stack = db_stacks.stack_get(stack_id)
        return {
            o["output_key"]: o.get("output_value")
            for o in definitions.resolve_outputs(stack, self.services)
        }

    def output_error(self, stack_id, key):
        """The child's ``output_error`` of output ``key`` (None if it
        resolves)."""
        stack = db_stacks.stack_get(stack_id)
        bound = definitions.get(
            stack["raw_template_id"], definitions.stack_info(stack)
        )
        if key not in bound.outputs:
            return None
        records = definitions.current_records(stack)
        return definitions.resolve_output(
            bound, records, key, self.services
        ).get("output_error")

    def members(self, stack_id):
        """{name: (reference id, {attribute: value})} of the child's
        current resources."""
        result = {}
        for record in db_records.resource_get_all(stack_id):
            plugin = definitions.plugin_for(record, self.services)
            result[record["name"]] = (
                plugin.get_reference_id()
                if record["physical_resource_id"]
                else record["name"],
                json.loads(record["attr_data"] or "{}"),
            )
        return result
