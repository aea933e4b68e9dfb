"""The engine's RPC endpoint (topic ``[engine] topic``).

Each method checks the request, reads or starts work, and answers in
Heat's engine format. Typed exceptions are expected: they go back to the
caller instead of being logged as errors here.
"""

import json
import re
import uuid

import oslo_messaging as messaging

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import api as db_api
from heat_lite.db import convergence as conv
from heat_lite.db import models
from heat_lite.engine import definitions, rpcapi, stacks, validation, views
from heat_lite.engine.template import functions
from heat_lite.engine.template import validate as tmpl_validate
from heat_lite.engine.template import versions as tmpl_versions

CONF = conf.CONF
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                      r"[0-9a-f]{12}$")


def _expected(fn):
    return messaging.expected_exceptions(exception.HeatLiteException)(fn)


class EngineService:
    """Stack operations requested by the API (or any RPC client)."""

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, stack_ops):
        self.ops = stack_ops

    # Lookup --------------------------------------------------------------
    @staticmethod
    def _stack(ctxt, stack_identity, live=False):
        stack = db_api.stack_get(stack_identity["stack_id"],
                                 tenant=ctxt.project_id,
                                 show_deleted=not live)
        name = stack_identity.get("stack_name")
        if name and name != stack["name"]:
            raise exception.StackNotFound(name=name)
        return stack

    @_expected
    def identify_stack(self, ctxt, stack_name):
        if _UUID_RE.match(stack_name):
            try:
                return views.identity(db_api.stack_get(
                    stack_name, tenant=ctxt.project_id))
            except exception.StackNotFound:
                pass
        return views.identity(db_api.stack_get_by_name(ctxt.project_id,
                                                       stack_name))

    # Create, update, delete ---------------------------------------------
    @_expected
    def create_stack(self, ctxt, stack_name, template, params, files,
                     environment, environment_files, args):
        validation.check_stack_name(stack_name)
        limit = CONF.max_stacks_per_tenant
        if (limit != -1 and not ctxt.is_admin
                and db_api.stack_count(ctxt.project_id) >= limit):
            raise exception.RequestLimitExceeded(
                message="You have reached the maximum stacks per tenant, "
                "%d. Please delete some stacks." % limit)
        stack_id = str(uuid.uuid4())
        env = validation.environment(environment, params, environment_files,
                                     files)
        info = {"name": stack_name, "id": stack_id,
                "project_id": ctxt.project_id}
        bound = validation.bind(template, env, files, info)
        values = {"id": stack_id, "name": stack_name,
                  "tenant": ctxt.project_id, "username": ctxt.user_id,
                  "action": "CREATE", "status": "IN_PROGRESS",
                  "status_reason": "Stack CREATE started",
                  "current_traversal": "",
                  "timeout": args.get("timeout_mins"),
                  "disable_rollback": args.get("disable_rollback", True),
                  "tags": json.dumps(args["tags"]) if args.get("tags")
                  else None}
        stack = db_api.stack_create(values, template, env, files or {})
        self.ops.start(stack, "CREATE", bound,
                       goal_template_id=stack["raw_template_id"])
        return views.identity(stack)

    @_expected
    def update_stack(self, ctxt, stack_identity, template, params, files,
                     environment, environment_files, args, existing=False):
        stack = self._stack(ctxt, stack_identity, live=True)
        if stack["action"] == "DELETE":
            raise exception.NotSupported(
                feature="Updating a stack when it is deleting")
        if stack["action"] == "SUSPEND":
            raise exception.NotSupported(
                feature="Updating a stack when it is suspended")
        stored = db_api.raw_template_get(stack["raw_template_id"])
        if existing:
            template = template or stored["template"]
            env = validation.environment(stored["environment"], None)
            new_env = validation.environment(environment, params,
                                             environment_files, files)
            for key in args.get("clear_parameters") or []:
                env["parameters"].pop(key, None)
            for section, value in new_env.items():
                if isinstance(value, dict):
                    env.setdefault(section, {}).update(value)
            files = dict(stored["files"], **(files or {}))
        else:
            env = validation.environment(environment, params,
                                         environment_files, files)
            files = files or {}
        bound = validation.bind(template, env, files,
                                definitions.stack_info(stack))
        self._check_immutable(stack, bound)
        extra = {"timeout": args.get("timeout_mins", stack["timeout"])}
        if args.get("disable_rollback") is not None:
            extra["disable_rollback"] = args["disable_rollback"]
        if "tags" in args or not existing:
            extra["tags"] = (json.dumps(args["tags"]) if args.get("tags")
                             else None)
        self.ops.start(stack, "UPDATE", bound,
                       new_template=(template, env, files), extra=extra)
        return views.identity(stack)

    @staticmethod
    def _check_immutable(stack, bound):
        old = definitions.get(stack["raw_template_id"],
                              definitions.stack_info(stack))
        changed = [name for name, param in bound.template.parameters.items()
                   if param.immutable and name in old.parameters
                   and old.parameters[name] != bound.parameters[name]]
        if changed:
            raise exception.ImmutableParameterModified(
                keys=", ".join(sorted(changed)))

    @_expected
    def delete_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity, live=True)
        self.ops.start(stack, "DELETE")

    @_expected
    def stack_cancel_update(self, ctxt, stack_identity,
                            cancel_with_rollback=True):
        stack = self._stack(ctxt, stack_identity, live=True)
        allowed = ("UPDATE",) if cancel_with_rollback else ("UPDATE",
                                                            "CREATE")
        if stack["status"] != "IN_PROGRESS" or stack["action"] not in \
                allowed:
            raise exception.NotSupported(
                feature="Cancelling update when stack is %s_%s" % (
                    stack["action"], stack["status"]))
        reason = "Stack %s cancelled" % stack["action"]
        if cancel_with_rollback:
            self.ops.rollback(stack, events=[stacks.stack_event(
                stack, stack["action"], "FAILED", reason)])
        else:
            self.ops.cancel(stack, reason)

    @_expected
    def stack_action(self, ctxt, stack_identity, action):
        """Suspend, resume or check a stack."""
        if action not in ("SUSPEND", "RESUME", "CHECK"):
            raise exception.NotSupported(feature="Stack %s" % action)
        stack = self._stack(ctxt, stack_identity, live=True)
        if stack["action"] == "DELETE":
            raise exception.NotSupported(
                feature="%s of a stack being deleted" % action.title())
        self.ops.run_action(stack, action)

    # Templates -----------------------------------------------------------
    @_expected
    def validate_template(self, ctxt, template, params, files, environment,
                          environment_files, show_nested=False):
        env = validation.environment(environment, params, environment_files,
                                     files)
        info = {"name": "validate", "id": "None",
                "project_id": ctxt.project_id}
        bound = validation.bind(template, env, files, info)
        return tmpl_validate.document(bound.template, env)

    @_expected
    def list_template_versions(self, ctxt):
        return tmpl_versions.list_versions()

    @_expected
    def list_template_functions(self, ctxt, template_version,
                                with_condition_func=False):
        return tmpl_versions.list_functions(template_version,
                                            with_condition_func)

    # Reading -------------------------------------------------------------
    @_expected
    def show_stack(self, ctxt, stack_identity, resolve_outputs=True):
        stack = self._stack(ctxt, stack_identity)
        bound = definitions.get(stack["raw_template_id"],
                                definitions.stack_info(stack))
        outputs = None
        if resolve_outputs and not (stack["action"] == "DELETE"
                                    and stack["status"] == "COMPLETE"):
            outputs = self._outputs(stack, bound)
        return views.stack_detail(stack, bound, outputs)

    @staticmethod
    def _outputs(stack, bound):
        records = {r["name"]: r for r in conv.resource_get_all(stack["id"])}
        scope = definitions.RecordScope(bound, records)
        result = []
        for name, output in bound.outputs.items():
            item = {"output_key": name, "description": output.description}
            try:
                item["output_value"] = functions.resolve(output.value, scope)
            except exception.HeatLiteException as exc:
                item["output_value"] = None
                item["output_error"] = str(exc)
            result.append(item)
        return result

    @_expected
    def list_stacks(self, ctxt, params):
        rows = db_api.stack_get_all(
            tenant=ctxt.project_id, limit=params.get("limit"),
            marker=params.get("marker"), sort_keys=params.get("sort_keys"),
            sort_dir=params.get("sort_dir") or "desc",
            show_deleted=params.get("show_deleted", False),
            show_nested=params.get("show_nested", False),
            filters=params.get("filters"))
        return [views.stack_summary(r) for r in rows]

    @_expected
    def list_stack_resources(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        records = conv.resource_get_all(stack["id"])
        required_by = {}
        try:
            bound = definitions.get(stack["raw_template_id"],
                                    definitions.stack_info(stack))
            for name, defn in bound.resources.items():
                for dep in defn.depends:
                    required_by.setdefault(dep, []).append(name)
        except exception.HeatLiteException:
            pass
        return [views.resource(r, stack, required_by.get(r["name"], ()))
                for r in records]

    @_expected
    def describe_stack_resource(self, ctxt, stack_identity, resource_name,
                                with_attr=None):
        stack = self._stack(ctxt, stack_identity)
        records = [r for r in conv.resource_get_all(stack["id"])
                   if r["name"] == resource_name]
        if not records:
            raise exception.ResourceNotFound(resource_name=resource_name,
                                             stack_name=stack["name"])
        record = records[-1]
        required_by, description = [], ""
        try:
            bound = definitions.get(stack["raw_template_id"],
                                    definitions.stack_info(stack))
            required_by = [n for n, d in bound.resources.items()
                           if resource_name in d.depends]
            defn = bound.resources.get(resource_name)
            description = defn.description if defn else ""
        except exception.HeatLiteException:
            pass
        result = views.resource(record, stack, required_by, detail=True)
        result["description"] = description or ""
        if with_attr:
            plugin = definitions.plugin_for(dict(record,
                                                 stack_name=stack["name"]))
            for name in with_attr:
                result["attributes"].setdefault(
                    name, plugin.get_attribute(name))
        return result

    @_expected
    def resource_versions(self, ctxt, stack_identity, resource_name):
        stack = self._stack(ctxt, stack_identity)
        versions = conv.resource_versions(stack["id"], resource_name)
        if not versions:
            raise exception.ResourceNotFound(resource_name=resource_name,
                                             stack_name=stack["name"])
        return [views.record_version(v) for v in versions]

    @_expected
    def list_events(self, ctxt, stack_identity, resource_name=None,
                    params=None):
        params = params or {}
        stack = self._stack(ctxt, stack_identity)
        rows = db_api.event_get_all(
            stack["id"], resource_name=resource_name,
            limit=params.get("limit"), marker=params.get("marker"),
            sort_dir=params.get("sort_dir") or "asc",
            filters=params.get("filters"))
        return [views.event(r, stack) for r in rows]

    @_expected
    def list_services(self, ctxt):
        now = models.utcnow()
        result = []
        for svc in db_api.service_get_all():
            age = (now - svc["updated_at"]).total_seconds()
            up = age <= CONF.engine.engine_life_check_timeout
            result.append({
                "id": svc["engine_id"], "engine_id": svc["engine_id"],
                "host": svc["host"], "hostname": svc["hostname"],
                "binary": svc["binary"], "topic": svc["topic"],
                "report_interval": svc["report_interval"],
                "status": "up" if up else "down",
                "created_at": views.timestamp(svc["created_at"]),
                "updated_at": views.timestamp(svc["updated_at"]),
                "deleted_at": None})
        return result
