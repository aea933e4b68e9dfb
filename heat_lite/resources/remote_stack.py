"""OS::Heat::Stack: a stack in another heat_lite or Heat endpoint.

Every action starts the matching operation on the remote stack through
``remote_client`` and then polls the remote state with
``check_<action>_complete`` (``[remote_stack] poll_interval``), so no
worker thread waits on the other cloud. A remote stack that ends FAILED
fails the resource with the remote status reason. The physical ID is the
remote stack's id; its name (``physical_resource_name()``) is kept in the
resource data because the remote API addresses stacks by name and id.

The remote stack gets the ``files`` map of the stack holding the resource
(its template's ``get_file`` and template resources are read there). A
create or update request is checked against the remote endpoint before it
is accepted (``check_request``, Heat's ``RemoteStack.validate``): a region
without an orchestration endpoint, or a template the remote endpoint
refuses, is a 400 of the request instead of a failed resource.
"""

from keystoneauth1 import exceptions as ks_exc

from heat_lite import conf
from heat_lite.common import exception, template_format
from heat_lite.common.states import Action
from heat_lite.resources import base, remote_client, stack_resource
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client as cloud_client

CONF = conf.CONF


class RemoteStackFailed(exception.HeatLiteException):
    msg_fmt = "%(reason)s"


CONTEXT_SCHEMA = {
    "region_name": p.Schema(
        p.STRING, "Region name in which this stack will be created."
    ),
    "credential_secret_id": p.Schema(
        p.STRING,
        "A secret holding credentials for the remote cloud; "
        "needs a key manager, which heat_lite does not have.",
    ),
    "ca_cert": p.Schema(
        p.STRING, "CA certificate (PEM) of the remote endpoint."
    ),
    "insecure": p.Schema(
        p.BOOLEAN,
        "Do not verify the remote endpoint's TLS certificate.",
        default=False,
    ),
}


class RemoteStack(stack_resource.PollsStack, base.Resource):
    """Heat's properties and attributes; see the module docstring."""

    properties_schema = {
        "context": p.Schema(
            p.MAP, "Context for this stack.", schema=CONTEXT_SCHEMA
        ),
        "template": p.Schema(
            p.STRING,
            "Template that specifies the stack to be created as a resource.",
            required=True,
            update_allowed=True,
        ),
        "timeout": p.Schema(
            p.INTEGER,
            "Number of minutes to wait for this stack creation.",
            update_allowed=True,
        ),
        "parameters": p.Schema(
            p.MAP,
            "Set of parameters passed to this stack.",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "stack_name": p.Attribute("Name of the stack.", "STRING"),
        "outputs": p.Attribute(
            "A dict of key-value pairs output from the stack.", "MAP"
        ),
    }
    # The engine sets ``request_context`` from the operation's caller; its
    # token is used when the stack has no trust (see remote_client).
    needs_caller_token = True
    _remote = None

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        context = props.get("context")
        if isinstance(context, dict) and context.get("credential_secret_id"):
            raise exception.StackValidationFailed(
                path="%s.context.credential_secret_id" % path,
                msg="credential_secret_id needs a key manager, which is "
                "not available; configure [remote_stack] credentials",
            )
        return props

    @classmethod
    def check_request(cls, values, files, path):
        """Ask the remote endpoint to validate the template (see
        ``base.Resource.check_request``), as the requesting user.

        :raises StackValidationFailed: Heat's messages for an endpoint
            that cannot be found and a template it refuses.
        """
        template = values.get("template")
        if not isinstance(template, str):
            return  # made by another resource: checked when created
        context = values.get("context")
        context = context if isinstance(context, dict) else {}
        region = context.get("region_name")
        try:
            remote = remote_client.RemoteHeat(
                context, cloud_client.acting().request
            )
            remote.endpoint()
        except remote_client.RemoteError:
            return  # no credentials here: the create says so later
        except ks_exc.ClientException as exc:
            raise exception.StackValidationFailed(
                message="Cannot establish connection to Heat endpoint at "
                'region "%s" due to "%s"' % (region, exc)
            ) from None
        try:
            parsed = template_format.loads(template)
            remote.validate(
                parsed,
                files or {},
                _literal(values.get("parameters")),
            )
        except (ValueError, remote_client.RemoteError) as exc:
            detail = getattr(exc, "kwargs", {}).get("remote_message")
            raise exception.StackValidationFailed(
                message="Failed validating stack template using Heat "
                'endpoint at region "%s" due to "%s"'
                % (region, "ERROR: %s" % detail if detail else exc)
            ) from None

    @property
    def default_poll_interval(self):
        return CONF.remote_stack.poll_interval

    def _client(self):
        """The remote API, made once per action: polls reuse its session
        (and the token it authenticated with)."""
        if self._remote is None:
            self._remote = remote_client.RemoteHeat(
                self.properties.get("context"),
                self.request_context,
                trusted=cloud_client.trust_session(self),
            )
        return self._remote

    def _template(self):
        try:
            template = template_format.loads(self.properties["template"])
        except ValueError as exc:
            raise RemoteStackFailed(
                reason="The remote stack template is not valid YAML: %s" % exc
            ) from None
        if not isinstance(template, dict):
            raise RemoteStackFailed(
                reason="The remote stack template is not a map"
            )
        return template

    def _files(self):
        """The ``files`` map of the stack holding this resource."""
        nested = self.services.nested_stacks
        template_id = self.stack.get("template_id")
        if nested is None or template_id is None:
            return {}
        return nested.files(template_id)

    def _remote_name(self):
        return self.data().get("stack_name") or self.physical_resource_name()

    # Actions ---------------------------------------------------------------
    def handle_create(self):
        name = self.physical_resource_name()
        self.data_set("stack_name", name)
        stack_id = self._client().create(
            name,
            self._template(),
            self.properties.get("parameters") or {},
            self.properties.get("timeout"),
            self._files(),
        )
        self.resource_id_set(stack_id)
        return Action.CREATE

    def handle_update(self, new_props, prop_diff):
        self.properties = new_props
        self._client().update(
            self._remote_name(),
            self.resource_id,
            self._template(),
            new_props.get("parameters") or {},
            new_props.get("timeout"),
            self._files(),
        )
        return Action.UPDATE

    def handle_delete(self):
        if self.resource_id:
            self._client().delete(self._remote_name(), self.resource_id)
        return Action.DELETE

    def _action(self, action):
        self._client().action(
            self._remote_name(), self.resource_id, action.lower()
        )
        return action

    def handle_suspend(self):
        return self._action(Action.SUSPEND)

    def handle_resume(self):
        return self._action(Action.RESUME)

    def handle_check(self):
        return self._action(Action.CHECK)

    def _stack_done(self, action):
        """Poll the remote stack; its failure reason fails the resource."""
        if not self.resource_id:
            return True
        stack = self._client().get(self._remote_name(), self.resource_id)
        state = None
        if stack is not None:
            remote_action, _, status = stack["stack_status"].partition("_")
            state = (
                remote_action,
                status,
                "Remote stack %s %s: %s"
                % (
                    self._remote_name(),
                    stack["stack_status"],
                    stack.get("stack_status_reason"),
                ),
            )
        return stack_resource.stack_done(
            state,
            action,
            self.default_poll_interval,
            "Remote stack %s is gone" % self.resource_id,
            error=RemoteStackFailed,
        )

    # Attributes ------------------------------------------------------------
    def _remote_stack(self):
        if not self.resource_id:
            return None
        return self._client().get(self._remote_name(), self.resource_id)

    def _resolve_attribute(self, name):
        if name == "stack_name":
            return self.data().get("stack_name")
        if name == "outputs":
            stack = self._remote_stack()
            if stack is None:
                return None
            return {
                o["output_key"]: o.get("output_value")
                for o in stack.get("outputs") or []
            }
        return None

    def live_state(self):
        """Drift: a stack of another region or cloud is that Heat's to
        check (``detect_drift`` there); gone, it is DELETED."""
        if self._remote_stack() is None:
            raise base.ResourceGone()
        raise NotImplementedError(
            "a remote stack's drift is detected by its own region's Heat"
        )

    def _show_resource(self):
        return self._remote_stack()


def _literal(parameters):
    """The parameters given as plain values (a map), else none."""
    return parameters if isinstance(parameters, dict) else {}
