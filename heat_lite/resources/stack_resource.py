"""Resources backed by a nested stack (template resources, groups).

The engine's child stacks are reached through the plugin's services
(``services.nested_stacks``, see ``heat_lite.resources.services``); a
subclass only says which template its child stack converges on
(``child_template``). Create, update, delete, suspend, resume and check
start the matching operation on the child and then poll its state, so a
worker thread never waits and engines never call each other.
"""

from heat_lite.common import exception
from heat_lite.common.states import Action, Status
from heat_lite.resources import base


class NestedStackFailed(exception.HeatLiteException):
    msg_fmt = "%(reason)s"


def stack_done(state, action, delay, gone_reason, error=NestedStackFailed):
    """True once a stack has finished ``action``.

    :param state: the stack's (action, status, reason), None if it is gone.
    :raises PollDelay: (``delay`` s) while it runs or has not started
        ``action`` yet.
    :raises error: with the stack's reason if the action failed, or with
        ``gone_reason`` if the stack is gone before a DELETE.
    """
    if state is None:
        if action == Action.DELETE:
            return True
        raise error(reason=gone_reason)
    stack_action, status, reason = state
    if status == Status.IN_PROGRESS or stack_action != action:
        raise base.PollDelay(delay)
    if status == Status.FAILED:
        raise error(reason=reason)
    return True


class PollsStack:
    """``check_<action>_complete`` for a resource whose handlers return
    the action's name and whose ``_stack_done(action)`` polls a stack."""

    def _stack_done(self, action):
        raise NotImplementedError

    def check_create_complete(self, cookie):
        return self._stack_done(cookie)

    check_update_complete = check_create_complete
    check_delete_complete = check_create_complete
    check_suspend_complete = check_create_complete
    check_resume_complete = check_create_complete
    check_check_complete = check_create_complete
    check_adopt_complete = check_create_complete


class StackResource(PollsStack, base.Resource):
    """Base class of resources that own one child stack."""

    # Every update is pushed into the child: its template may change
    # without the resource's own properties changing.
    always_update = True
    # The handlers start an action on the child stack, which writes its
    # own "Stack <ACTION> started" event: this resource's IN_PROGRESS
    # event is written first, so that nested event lists read in order.
    announces_start = True

    @property
    def nested_stacks(self):
        """The engine's child stacks (``services.nested_stacks``; None
        outside an engine process)."""
        return self.services.nested_stacks

    def child_template(self):
        """Return (template, parameters) of the child stack."""
        raise NotImplementedError

    def _parent_template_id(self):
        return self.stack.get("template_id")

    def handle_create(self):
        template, params = self.child_template()
        child_id = self.nested_stacks.create(
            self.stack["id"],
            self._parent_template_id(),
            self.name,
            template,
            params,
        )
        self.resource_id_set(child_id)
        return Action.CREATE

    def handle_adopt(self, resource_data):
        """Adopt the child stack from the entry's nested ``resources``
        (a new child stack, whose own resources are adopted)."""
        template, params = self.child_template()
        child_id = self.nested_stacks.create(
            self.stack["id"],
            self._parent_template_id(),
            self.name,
            template,
            params,
            adopt=resource_data.get("resources") or {},
        )
        self.resource_id_set(child_id)
        return Action.ADOPT

    def handle_update(self, new_props, prop_diff):
        self.properties = new_props
        template, params = self.child_template()
        self.nested_stacks.update(
            self.resource_id,
            self._parent_template_id(),
            self.name,
            template,
            params,
        )
        return Action.UPDATE

    def handle_delete(self):
        if self.resource_id:
            self.nested_stacks.delete(self.resource_id)
        return Action.DELETE

    def _run(self, action):
        if self.resource_id:
            self.nested_stacks.run_action(self.resource_id, action)
        return action

    def handle_suspend(self):
        return self._run(Action.SUSPEND)

    def handle_resume(self):
        return self._run(Action.RESUME)

    def handle_check(self):
        return self._run(Action.CHECK)

    def _stack_done(self, action):
        if not self.resource_id:
            return True
        return stack_done(
            self.nested_stacks.state(self.resource_id),
            action,
            self.default_poll_interval,
            "Nested stack %s is gone" % self.resource_id,
        )

    def live_state(self):
        """Drift: the engine compares the child stack's resources one by
        one (``engine.drift``); this only says whether the child is
        gone."""
        if self.nested_stacks is None:
            raise NotImplementedError
        if (
            not self.resource_id
            or self.nested_stacks.state(self.resource_id) is None
        ):
            raise base.ResourceGone()
        return {}

    def child_arn(self):
        """The child stack's ARN (``arn:openstack:heat::<project>:stacks/
        <name>/<id>``), read from the child's own row so that it names
        the real project however this plugin was loaded; None before the
        child exists."""
        if not self.resource_id or self.nested_stacks is None:
            return None
        return self.nested_stacks.arn(self.resource_id)

    def child_outputs(self):
        if not self.resource_id or self.nested_stacks is None:
            return {}
        return self.nested_stacks.outputs(self.resource_id)

    def child_output(self, key):
        """The child's output ``key`` (None if it has none).

        :raises TemplateOutputError: if that output does not resolve.
        """
        outputs = self.child_outputs()
        value = outputs.get(key)
        if value is None and key in outputs:
            error = self.nested_stacks.output_error(self.resource_id, key)
            if error:
                raise exception.TemplateOutputError(
                    resource=self.name, attribute=key, reason=error
                )
        return value
