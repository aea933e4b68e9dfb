"""Checking the new goal of a stack update.

An update (``EngineService.update_stack`` and its preview) and each
target of a fleet rollout (``fleet.target.TargetDriver``) start the same
way: the stack must accept an update now, the request's template,
environment and files are merged with the stored ones (PATCH) or replace
them, the result is bound and checked (resource types the caller may
use, immutable parameters). ``UpdateGoals`` is that check, given to both.
"""

from heat_lite.common import exception, policy, verify_spec
from heat_lite.common.states import Action
from heat_lite.db import api as db_api
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
            authorize=types_checker(ctxt),
        )
        _check_immutable(stack, bound)
        return stack, template, env, files, bound


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


def types_checker(ctxt):
    """``check(type names)``: 403 for a resource type the caller may not
    use (Heat's ``resource_types:`` rules)."""

    def check(names):
        policy.authorize_resource_types(ctxt, names, ctxt.project_id)

    return check


def verify_document(args, adopt=False):
    """The checked ``verify`` document of a request, or None."""
    if args.get("verify") is None:
        return None
    if adopt:
        raise exception.InvalidVerify(reason="adopt cannot be verified")
    return verify_spec.parse(args["verify"])
