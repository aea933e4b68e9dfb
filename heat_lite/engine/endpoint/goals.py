"""The goal of a create or an update, checked: what a stack is to become.

Every caller that starts a stack operation towards a new template goes
through here: the stack API (``endpoint.service``), a rollout's targets
(``fleet.rollout.target.TargetDriver``) and promotions (``fleet.promotion``).
An update starts the same way for all of them: the stack must accept an
update now, the request's template, environment and files are merged with
the stored ones (PATCH) or replace them, the result is bound and checked
(resource types the caller may use, immutable parameters).
``UpdateGoals`` is that check, given to each; ``new_stack`` is a create's.
Nothing here writes.
"""

import json

from heat_lite.common import exception, policy, verify_spec
from heat_lite.common.states import CONVERGE, UPDATE_SEMANTICS, Action, Status
from heat_lite.db import templates as db_templates
from heat_lite.engine import definitions, validation
from heat_lite.engine.endpoint.base import find_stack
from heat_lite.engine.traversal import ops


class UpdateGoals:
    """The checked goal of an update request."""

    def check(
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
        """Check an update request.

        :param existing: PATCH: the request's parts are merged with the
            stack's stored template, environment and files.
        :returns: (stack, template, env, files, bound).
        :raises StackNotFound, NotSupported, Invalid, Forbidden,
            ImmutableParameterModified: for a request that may not start.
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        ops.check_start(stack, Action.UPDATE)
        verify_document(args)
        template, env, files, bound = self.goal(
            ctxt,
            stack,
            template,
            params,
            files,
            environment,
            environment_files,
            args,
            existing,
        )
        return stack, template, env, files, bound

    def goal(
        self,
        ctxt,
        stack,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing,
    ):
        """The request's goal for ``stack`` (a row), bound and checked,
        whether or not the stack may start an update now: ``check``
        without its first steps, for a caller that checks a request
        before the update's time comes (a rollout, at its creation).

        :returns: (template, env, files, bound).
        :raises: the 400s (and 403s) of binding the goal.
        """
        stored = db_templates.raw_template_get(stack["raw_template_id"])
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
            authorize=types_checker(ctxt),
        )
        check_immutable(stack, bound)
        return template, env, files, bound


def new_stack(
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
    action = Action.CREATE
    if args.get("adopt_stack_data") is not None:
        action = Action.ADOPT
    verify_document(args, adopt=action == Action.ADOPT)
    env = validation.environment(environment, params, environment_files, files)
    info = {"name": stack_name, "id": stack_id, "project_id": ctxt.project_id}
    bound = validation.bind(
        template, env, files, info, authorize=types_checker(ctxt)
    )
    values = {
        "id": stack_id,
        "name": stack_name,
        "tenant": ctxt.project_id,
        # Heat's stack_owner: the user's name (the ID when it has none)
        "username": ctxt.user_name or ctxt.user_id,
        "action": action,
        "status": Status.IN_PROGRESS,
        "status_reason": "Stack %s started" % action,
        "current_traversal": "",
        "timeout": args.get("timeout_mins"),
        "disable_rollback": args.get("disable_rollback", True),
        "tags": json.dumps(args["tags"]) if args.get("tags") else None,
    }
    return values, env, bound


def check_immutable(stack, bound):
    """:raises ImmutableParameterModified: if ``bound`` changes a
    parameter the stack's template declares immutable."""
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


def types_checker(ctxt):
    """``check(type names)``: 403 for a resource type the caller may not
    use (Heat's ``resource_types:`` rules)."""

    def check(names):
        policy.authorize_resource_types(ctxt, names, ctxt.project_id)

    return check


def semantics_arg(args):
    """The ``update_semantics`` of a request's args as stored: None for
    converge (the default) or when absent.

    :raises InvalidParameter: (400) for a value not in
        ``states.UPDATE_SEMANTICS``.
    """
    value = args.get("update_semantics")
    if value is None or value == CONVERGE:
        return None
    if value not in UPDATE_SEMANTICS:
        raise exception.Invalid(
            message="update_semantics must be one of %s, not %r"
            % (", ".join(UPDATE_SEMANTICS), value)
        )
    return value


def verify_document(args, adopt=False):
    """The checked ``verify`` document of a request, or None."""
    if args.get("verify") is None:
        return None
    if adopt:
        raise exception.InvalidVerify(reason="adopt cannot be verified")
    return verify_spec.parse(args["verify"])
