"""The engine's RPC endpoint (topic ``[engine] topic``).

Each method checks the request, reads or starts work, and answers in
Heat's engine format. Typed exceptions are expected: they go back to the
caller instead of being logged as errors here.
"""

import json
import logging
import re
import uuid

from heat_lite import conf
from heat_lite.common import exception, policy, verify_spec
from heat_lite.db import api as db_api
from heat_lite.engine import definitions, trusts, validation
from heat_lite.engine.endpoint import (
    abandon,
    preview,
    queries,
    snapshots,
    views,
)
from heat_lite.engine.endpoint.base import (
    TARGET,
    bound_template,
    expected,
    find_stack,
    records_by_name,
)
from heat_lite.engine.endpoint.catalog import CatalogEndpoint
from heat_lite.engine.endpoint.reads import ReadEndpoint
from heat_lite.engine.endpoint.resources import ResourceEndpoint
from heat_lite.engine.endpoint.software_configs import SoftwareConfigEndpoint
from heat_lite.engine.traversal import ops as stacks
from heat_lite.engine.worker import adopt, caller

CONF = conf.CONF
LOG = logging.getLogger(__name__)
_UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
    r"[0-9a-f]{12}$"
)


_expected = expected


def endpoints(stack_ops, stack_service=None):
    """The endpoint objects of the [engine] topic, for one RPC server.

    oslo.messaging finds each method on whichever of them has it; each is
    given what it needs here. The stack operations need ``stack_ops`` (or
    are ``stack_service``, when the caller keeps it for other uses); the
    reads, the resource calls, the catalog and software configs work on
    the database alone.
    """
    return [
        stack_service or EngineService(stack_ops),
        ReadEndpoint(),
        ResourceEndpoint(),
        CatalogEndpoint(),
        SoftwareConfigEndpoint(),
        snapshots.SnapshotEndpoint(stack_ops),
    ]


class EngineService:
    """Stack operations requested by the API (or any RPC client): start
    and stop them. The other calls of the topic are answered by the
    endpoints of ``reads``, ``resources``, ``catalog`` and
    ``software_configs`` (see ``endpoints``).
    """

    target = TARGET

    def __init__(self, stack_ops):
        self.ops = stack_ops

    # Lookup --------------------------------------------------------------
    _stack = staticmethod(find_stack)

    @_expected
    def identify_stack(self, ctxt, stack_name):
        if not isinstance(stack_name, str):
            raise exception.StackNotFound(name=str(stack_name))
        if _UUID_RE.match(stack_name):
            try:
                return views.identity(
                    db_api.stack_get(stack_name, tenant=ctxt.project_id)
                )
            except exception.StackNotFound:
                pass
        return views.identity(
            db_api.stack_get_by_name(ctxt.project_id, stack_name)
        )

    # Create, update, delete ---------------------------------------------
    @staticmethod
    def _new_stack(
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        stack_id,
    ):
        """Check a create request; return (stack values, env, bound)."""
        validation.check_stack_name(stack_name)
        action = "CREATE"
        if args.get("adopt_stack_data") is not None:
            action = "ADOPT"
        _verify(args, adopt=action == "ADOPT")
        env = validation.environment(
            environment, params, environment_files, files
        )
        info = {
            "name": stack_name,
            "id": stack_id,
            "project_id": ctxt.project_id,
        }
        bound = validation.bind(
            template, env, files, info, authorize=_types_checker(ctxt)
        )
        values = {
            "id": stack_id,
            "name": stack_name,
            "tenant": ctxt.project_id,
            "username": ctxt.user_id,
            "action": action,
            "status": "IN_PROGRESS",
            "status_reason": "Stack %s started" % action,
            "current_traversal": "",
            "timeout": args.get("timeout_mins"),
            "disable_rollback": args.get("disable_rollback", True),
            "tags": json.dumps(args["tags"]) if args.get("tags") else None,
        }
        return values, env, bound

    @_expected
    def create_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        limit = CONF.max_stacks_per_tenant
        if (
            limit != -1
            and not ctxt.is_admin
            and db_api.stack_count(ctxt.project_id) >= limit
        ):
            raise exception.RequestLimitExceeded(
                message="You have reached the maximum stacks per tenant, "
                "%d. Please delete some stacks." % limit
            )
        template, params, files = adopt.inputs(
            args.get("adopt_stack_data"), template, params, files
        )
        values, env, bound = self._new_stack(
            ctxt,
            stack_name,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            str(uuid.uuid4()),
        )
        # The trust first: a create Keystone refuses leaves no stack.
        values["trust_id"] = trusts.create(ctxt)
        try:
            stack = db_api.stack_create(values, template, env, files or {})
        except Exception:
            trusts.delete(values["trust_id"])
            raise
        resources = None
        if values["action"] == "ADOPT":
            resources = adopt.check_data(args["adopt_stack_data"])
        self.ops.start(
            stack,
            values["action"],
            bound,
            goal_template_id=stack["raw_template_id"],
            adopt=resources,
            caller_token=caller.keep(ctxt),
            verify=_verify(args),
        )
        return views.identity(stack)

    @_expected
    def preview_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        template, params, files = adopt.inputs(
            args.get("adopt_stack_data"), template, params, files
        )
        values, _env, bound = self._new_stack(
            ctxt,
            stack_name,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            "None",
        )
        stack = dict(
            values,
            owner_id=None,
            created_at=None,
            updated_at=None,
            deleted_at=None,
        )
        return views.stack_preview(
            stack, bound, preview.create_resources(stack, bound)
        )

    def _update_goal(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing,
    ):
        """Check an update request; return (stack, template, env, files,
        bound). A rollout's targets use it too (``fleet.target``); it is
        private so that it is no RPC method."""
        stack = self._stack(ctxt, stack_identity, live=True)
        stacks.check_start(stack, "UPDATE")
        _verify(args)
        stored = db_api.raw_template_get(stack["raw_template_id"])
        if existing:
            template = template or stored["template"]
            env = validation.environment(stored["environment"], None)
            new_env = validation.environment(
                environment, params, environment_files, files
            )
            for key in args.get("clear_parameters") or []:
                env["parameters"].pop(key, None)
            for section, value in new_env.items():
                if isinstance(value, dict):
                    env.setdefault(section, {}).update(value)
            files = dict(stored["files"], **(files or {}))
        else:
            env = validation.environment(
                environment, params, environment_files, files
            )
            files = files or {}
        bound = validation.bind(
            template,
            env,
            files,
            definitions.stack_info(stack),
            authorize=_types_checker(ctxt),
        )
        self._check_immutable(stack, bound)
        return stack, template, env, files, bound

    @_expected
    def update_stack(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
    ):
        stack, template, env, files, bound = self._update_goal(
            ctxt,
            stack_identity,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            existing,
        )
        trusts.ensure(ctxt, stack)
        extra = {"timeout": args.get("timeout_mins", stack["timeout"])}
        if args.get("disable_rollback") is not None:
            extra["disable_rollback"] = args["disable_rollback"]
        if "tags" in args or not existing:
            extra["tags"] = (
                json.dumps(args["tags"]) if args.get("tags") else None
            )
        self.ops.start(
            stack,
            "UPDATE",
            bound,
            new_template=(template, env, files),
            extra=extra,
            caller_token=caller.keep(ctxt),
            verify=_verify(args),
        )
        return views.identity(stack)

    @_expected
    def preview_update_stack(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
        show_nested=False,
    ):
        stack, _t, _e, _f, bound = self._update_goal(
            ctxt,
            stack_identity,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            existing,
        )
        try:
            old_bound = bound_template(stack)
        except exception.HeatLiteException:
            old_bound = None
        return preview.update_changes(
            stack,
            bound,
            old_bound,
            records_by_name(stack),
            show_nested=show_nested,
        )

    @staticmethod
    def _check_immutable(stack, bound):
        old = definitions.get(
            stack["raw_template_id"], definitions.stack_info(stack)
        )
        changed = [
            name
            for name, param in bound.template.parameters.items()
            if param.immutable
            and name in old.parameters
            and old.parameters[name] != bound.parameters[name]
        ]
        if changed:
            raise exception.ImmutableParameterModified(
                keys=", ".join(sorted(changed))
            )

    @_expected
    def delete_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity, live=True)
        try:
            trusts.ensure(ctxt, stack)
        except exception.HeatLiteException as exc:
            # A stack with nothing in the cloud must stay deletable.
            LOG.warning(
                "Stack %s is deleted without a trust: %s", stack["id"], exc
            )
        # Heat's order: the snapshots (and their images) go first.
        snapshots.delete_all(stack)
        self.ops.start(stack, "DELETE", caller_token=caller.keep(ctxt))

    @_expected
    def export_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity, live=True)
        if not CONF.enable_stack_abandon:
            raise exception.feature_disabled(
                "Stack Export", "enable_stack_abandon"
            )
        return abandon.export(stack)

    @_expected
    def abandon_stack(self, ctxt, stack_identity):
        """Return the abandon data and remove the stack tree, leaving its
        physical resources in place."""
        stack = self._stack(ctxt, stack_identity, live=True)
        if not CONF.enable_stack_abandon:
            raise exception.feature_disabled(
                "Stack Abandon", "enable_stack_abandon"
            )
        return abandon.abandon(stack)

    @_expected
    def stack_cancel_update(
        self, ctxt, stack_identity, cancel_with_rollback=True
    ):
        # A cancel that loses its race to another operation (a delete)
        # looks again, and gets the answer that operation's state gives.
        for _ in range(3):
            stack = self._stack(ctxt, stack_identity, live=True)
            allowed = (
                ("UPDATE",) if cancel_with_rollback else ("UPDATE", "CREATE")
            )
            if (
                stack["status"] != "IN_PROGRESS"
                or stack["action"] not in allowed
            ):
                raise exception.NotSupported(
                    feature="Cancelling update when stack is %s_%s"
                    % (stack["action"], stack["status"])
                )
            if self._cancel(ctxt, stack, cancel_with_rollback):
                return
        raise exception.ConcurrentTransaction(what="stack %s" % stack["id"])

    def _cancel(self, ctxt, stack, cancel_with_rollback):
        """Stop the running operation; False if a newer one replaced it
        meanwhile."""
        reason = "Stack %s cancelled" % stack["action"]
        if cancel_with_rollback:
            started = self.ops.rollback(
                stack,
                events=[
                    stacks.stack_event(
                        stack, stack["action"], "FAILED", reason
                    )
                ],
                caller_token=caller.keep(ctxt),
            )
            return started is not None
        return self.ops.cancel(stack, reason)

    @_expected
    def stack_action(self, ctxt, stack_identity, action):
        """Suspend, resume or check a stack."""
        if action not in ("SUSPEND", "RESUME", "CHECK"):
            raise exception.NotSupported(feature="Stack %s" % action)
        stack = self._stack(ctxt, stack_identity, live=True)
        stacks.check_start(stack, action)
        trusts.ensure(ctxt, stack)
        self.ops.run_action(stack, action, caller_token=caller.keep(ctxt))

    @_expected
    def stack_verdict(self, ctxt, stack_identity, status, reason=None):
        """A test runner's verdict (PASS / FAIL) on the stack's running
        verification (see ``engine.traversal.verify``)."""
        stack = self._stack(ctxt, stack_identity, live=True)
        self.ops.verifier.signal(stack, status, reason)

    @_expected
    def query_stacks(self, ctxt, selector, all_projects=False):
        """The stacks a selector matches (``engine.endpoint.queries``); every
        project's only for an admin."""
        if all_projects and not ctxt.is_admin:
            raise exception.Forbidden(action="stacks:query_all_projects")
        tenant = None if all_projects else ctxt.project_id
        return queries.Query(selector, tenant).run()


def _types_checker(ctxt):
    """``check(type names)``: 403 for a resource type the caller may not
    use (Heat's ``resource_types:`` rules)."""

    def check(names):
        policy.authorize_resource_types(ctxt, names, ctxt.project_id)

    return check


def _verify(args, adopt=False):
    """The checked ``verify`` document of a request, or None."""
    if args.get("verify") is None:
        return None
    if adopt:
        raise exception.InvalidVerify(reason="adopt cannot be verified")
    return verify_spec.parse(args["verify"])
