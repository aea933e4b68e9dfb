"""OS::Heat::SoftwareDeployment: apply a software config to a server.

For each of its ``actions`` (CREATE and UPDATE unless told) the resource
stores a *derived* config -- the config with every input given its value,
plus the ``deploy_*`` inputs an in-guest agent needs (server, action,
stack, resource name, signal transport) -- and a deployment of it to the
server, IN_PROGRESS. The server's metadata (``deployments``) and
``/software_deployments/metadata/<server>`` then list it for the agent,
ordered by config name (the ``name`` property). The resource completes
when the deployment does: the agent signals the resource (``CFN_SIGNAL``,
``HEAT_SIGNAL``: the engine decides the deployment's outcome as Heat's
``signal_software_deployment`` does, while the resource is IN_PROGRESS)
or updates the deployment through the API; FAILED fails the resource
with the deployment's reason. With
``NO_SIGNAL`` it completes at once. Deleting the resource deletes the
deployment and its derived config (after deploying DELETE, when it is
one of ``actions``). An update that gives a new value to an input marked
``replace_on_change`` replaces the resource.

Deployments and configs are kept in the database through the plugin's
services (``services.software_deployments``, ``services.software_configs``:
plugins never import the database layer). The deployment's output values
are its attributes: ``deploy_stdout``, ``deploy_stderr``,
``deploy_status_code`` and each output of the config by name.

``CFN_SIGNAL`` (Heat's default) gives the agent ``deploy_signal_id``, the
resource's signal URL on the heat_lite API (``heat-config-notify`` POSTs
its outputs there, with no credentials). Heat's is a URL of its
CloudFormation API signed with a stack user's EC2 key; heat_lite's, with
``auth_strategy = keystone``, carries a random token of the deployment
(``?token=``, ``context.SIGNAL_TOKEN_PARAM``) that lets the POST through
without a Keystone token (``api.auth.HandleTokens``); the engine accepts
it for this resource only, and only while the deployment's current
config holds that very URL (``signal_token_matches``): it dies with the
deployment;
``HEAT_SIGNAL`` gives ``deploy_project_id`` for the resource-signal API
(heat_lite makes no stack users, so no credentials go with it);
``TEMP_URL_SIGNAL`` and ``ZAQAR_SIGNAL`` are refused.
"""

import hmac
import secrets
import urllib.parse
import uuid

from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.resources import (
    base,
    wait_condition_handle,
)
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p

ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
TRANSPORTS = ("CFN_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL")
IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
# Output values every deployment has.
STANDARD_OUTPUTS = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
POLL = 0.5
CONF = conf.CONF


class DeploymentFailed(base.ActionFailed):
    """The deployment reported FAILED; the message is its reason."""


class SoftwareDeployment(base.Resource):
    """Heat's properties and attributes; see the module docstring."""

    properties_schema = {
        "config": p.Schema(
            p.STRING,
            "ID of software configuration resource to execute when "
            "applying to the server.",
            update_allowed=True,
        ),
        "server": p.Schema(
            p.STRING,
            "ID of resource to apply configuration to. Normally this "
            "should be a Nova server ID.",
            required=True,
        ),
        "input_values": p.Schema(
            p.MAP,
            "Input values to apply to the software configuration on this "
            "server.",
            update_allowed=True,
        ),
        "actions": p.Schema(
            p.LIST,
            "Which lifecycle actions of the deployment resource will "
            "result in this deployment being triggered.",
            update_allowed=True,
            default=["CREATE", "UPDATE"],
            schema=p.Schema(p.STRING, constraints=[c.AllowedValues(ACTIONS)]),
        ),
        "name": p.Schema(
            p.STRING,
            "Name of the derived config associated with this deployment. "
            "This is used to apply a sort order to the list of "
            "configurations currently deployed to a server.",
            update_allowed=True,
        ),
        "signal_transport": p.Schema(
            p.STRING,
            "How the server should signal to heat with the deployment "
            "output values. CFN_SIGNAL: an HTTP POST to the resource's "
            "signal URL; HEAT_SIGNAL: the resource-signal API; either "
            "waits for the signal (or an update of the deployment); "
            "NO_SIGNAL completes at once.",
            default="CFN_SIGNAL",
            constraints=[c.AllowedValues(TRANSPORTS)],
        ),
    }
    attributes_schema = {
        "deploy_stdout": p.Attribute(
            "Captured stdout from the configuration execution.",
            type="string",
        ),
        "deploy_stderr": p.Attribute(
            "Captured stderr from the configuration execution.",
            type="string",
        ),
        "deploy_status_code": p.Attribute(
            "Returned status code from the configuration execution.",
            type="string",
        ),
    }
    # The engine gives this type's signals to its deployment
    # (``signal_software_deployment``), also while it is IN_PROGRESS.
    signals_deployment = True

    @property
    def deployments(self):
        """Where deployments are kept (``services.software_deployments``:
        the engine's ``heat_lite.db.software_deployments``)."""
        return self.services.software_deployments

    # Identity --------------------------------------------------------
    def _tenant(self):
        return self.stack.get("tenant") or ""

    def _configs(self):
        return self.services.software_configs

    def _transport(self):
        return self.properties.get("signal_transport") or "CFN_SIGNAL"

    # The derived config ----------------------------------------------
    def _source(self):
        config_id = self.properties.get("config")
        if not config_id:
            return {"group": "Heat::Ungrouped", "inputs": [], "outputs": []}
        return self._configs().software_config_get(config_id, self._tenant())

    def derived_config(self, action, source):
        """The config to store for ``action``: ``source`` with each input
        given its value (a value without a declared input becomes one)
        and the ``deploy_*`` inputs. A subclass may change ``config``."""
        values = dict(self.properties.get("input_values") or {})
        inputs = []
        for declared in source.get("inputs") or []:
            item = dict(declared)
            item["value"] = values.pop(item["name"], item.get("default"))
            inputs.append(item)
        inputs += [{"name": k, "value": v} for k, v in values.items()]
        stack_id = self.stack.get("id") or self.stack.get("stack_id") or ""
        inputs += [
            _deploy_input(
                "deploy_server_id",
                self.properties["server"],
                "ID of the server being deployed to",
            ),
            _deploy_input(
                "deploy_action",
                action,
                "Name of the current action being deployed",
            ),
            _deploy_input(
                "deploy_stack_id",
                "%s/%s" % (self.stack.get("name", ""), stack_id),
                "ID of the stack this deployment belongs to",
            ),
            _deploy_input(
                "deploy_resource_name",
                self.name,
                "Name of this deployment resource in the stack",
            ),
            _deploy_input(
                "deploy_signal_transport",
                self._transport(),
                "How the server should signal to heat with the deployment "
                "output values.",
            ),
        ]
        if self._transport() == "CFN_SIGNAL":
            inputs += [
                _deploy_input(
                    "deploy_signal_id",
                    self._signal_url(),
                    "ID of signal to use for signaling output values",
                ),
                _deploy_input(
                    "deploy_signal_verb",
                    "POST",
                    "HTTP verb to use for signaling output values",
                ),
            ]
        if self._transport() == "HEAT_SIGNAL":
            inputs.append(
                _deploy_input(
                    "deploy_project_id",
                    self._tenant(),
                    "ID of project for API authentication",
                )
            )
        return {
            "group": source.get("group") or "Heat::Ungrouped",
            "config": source.get("config") or "",
            "options": source.get("options") or {},
            "inputs": inputs,
            "outputs": source.get("outputs") or [],
            "name": self.properties.get("name")
            or source.get("name")
            or self.physical_resource_name(),
        }

    def _signal_url(self):
        """The resource's signal URL; in keystone mode with the token
        that lets it through (kept in the data: the same in each of the
        deployment's configs)."""
        url = wait_condition_handle.signal_url(self.stack, self.name)
        if CONF.api.auth_strategy != "keystone":
            return url
        token = self._data.get("signal_token")
        if not token:
            token = context.HANDLE_TOKEN_PREFIX + secrets.token_urlsafe(32)
            self.data_set("signal_token", token)
        return "%s?%s" % (
            url,
            urllib.parse.urlencode({context.SIGNAL_TOKEN_PARAM: token}),
        )

    def signal_token_matches(self, token):
        """True when ``token`` is the one of the signal URL in this
        deployment's current config (the API let a POST with it through
        without a Keystone token)."""
        deployment = self._deployment()
        if deployment is None:
            return False
        try:
            config = self._configs().software_config_get(
                deployment["config_id"], self._tenant()
            )
        except exception.NotFound:
            return False
        for item in config.get("inputs") or []:
            if item.get("name") == "deploy_signal_id":
                query = urllib.parse.urlparse(item.get("value") or "").query
                mine = urllib.parse.parse_qs(query).get(
                    context.SIGNAL_TOKEN_PARAM, [""]
                )[0]
                return bool(mine) and hmac.compare_digest(mine, token)
        return False

    def _store_derived(self, action):
        config = self.derived_config(action, self._source())
        config.update(id=str(uuid.uuid4()), tenant=self._tenant())
        self._configs().software_config_create(config)
        return config["id"]

    def _delete_config(self, config_id):
        try:
            self._configs().software_config_delete(config_id, self._tenant())
        except exception.NotFound:
            pass

    # Actions -----------------------------------------------------------
    def _status(self):
        if self._transport() == "NO_SIGNAL":
            return COMPLETE, "Not waiting for outputs signal"
        return IN_PROGRESS, "Deploy data available"

    def _deploy(self, action):
        """Deploy for ``action`` if it is one of ``actions``; return
        whether there is a deployment to wait for."""
        if action not in (self.properties.get("actions") or []):
            return False
        config_id = self._store_derived(action)
        status, reason = self._status()
        values = {
            "config_id": config_id,
            "action": action,
            "status": status,
            "status_reason": reason,
            "input_values": self.properties.get("input_values") or {},
        }
        if self.resource_id is None:
            self.resource_id_set(str(uuid.uuid4()))
            values.update(
                id=self.resource_id,
                tenant=self._tenant(),
                server_id=self.properties["server"],
            )
            self.deployments.software_deployment_create(values)
            return status == IN_PROGRESS
        old = self._deployment()
        self.deployments.software_deployment_update(
            self.resource_id, self._tenant(), values
        )
        if old is not None:
            self._delete_config(old["config_id"])
        return status == IN_PROGRESS

    def live_state(self):
        """Drift: the deployment deleted through the software_deployments
        API is DELETED; its ``server`` is compared (engine.drift). Its
        status is the server's to signal, not drift."""
        deployment = self._deployment()
        if deployment is None:
            raise base.ResourceGone()
        return {"server": deployment["server_id"]}

    def _deployment(self):
        if self.resource_id is None:
            return None
        try:
            return self.deployments.software_deployment_get(
                self.resource_id, self._tenant()
            )
        except exception.NotFound:
            return None

    def _check(self, waiting):
        if not waiting:
            return True
        deployment = self._deployment()
        if deployment is None:
            raise DeploymentFailed("The deployment was deleted")
        if deployment["status"] == COMPLETE:
            # Kept for get_attr where the deployment cannot be read.
            self.data_set("outputs", deployment["output_values"] or {})
            return True
        if deployment["status"] == FAILED:
            raise DeploymentFailed(
                "Deployment to server failed: %s" % deployment["status_reason"]
            )
        raise base.PollDelay(POLL)

    def handle_create(self):
        return self._deploy("CREATE")

    def handle_update(self, new_props, prop_diff):
        old = self._deployment()
        self.properties = new_props
        if old is not None:
            self._replace_on_change(old)
        return self._deploy("UPDATE")

    def _replace_on_change(self, old):
        """Ask to be replaced when an input marked ``replace_on_change``
        gets a new value (as Heat does).

        :raises UpdateReplace: for such an input.
        """
        try:
            before = self._configs().software_config_get(
                old["config_id"], self._tenant()
            )["inputs"]
        except exception.NotFound:
            return
        values = {i["name"]: i.get("value") for i in before or []}
        for item in self.derived_config("UPDATE", self._source())["inputs"]:
            name = item["name"]
            if (
                item.get("replace_on_change")
                and name in values
                and values[name] != item.get("value")
            ):
                raise base.UpdateReplace(self.name)

    def handle_suspend(self):
        return self._deploy("SUSPEND")

    def handle_resume(self):
        return self._deploy("RESUME")

    def _cancel(self):
        """The action was stopped (the stack timed out, or failed
        elsewhere): a deployment still waiting for its signal is FAILED,
        so that the agent and the API see it will not complete."""
        deployment = self._deployment()
        if deployment is None or deployment["status"] != IN_PROGRESS:
            return
        self.deployments.software_deployment_update(
            self.resource_id,
            self._tenant(),
            {"status": FAILED, "status_reason": "Deployment cancelled."},
        )

    handle_create_cancel = _cancel
    handle_update_cancel = _cancel
    handle_delete_cancel = _cancel
    handle_suspend_cancel = _cancel
    handle_resume_cancel = _cancel

    check_create_complete = _check
    check_update_complete = _check
    check_suspend_complete = _check
    check_resume_complete = _check

    def handle_delete(self):
        """Deploy DELETE first when it is one of ``actions`` (a config
        may clean up the server); the deployment goes once it is done."""
        if self._deployment() is None:
            return False
        return self._deploy("DELETE")

    def check_delete_complete(self, waiting):
        deployment = self._deployment()
        if deployment is None:
            return True  # deleted through the API meanwhile
        self._check(waiting)
        self.deployments.software_deployment_delete(
            self.resource_id, self._tenant()
        )
        self._delete_config(deployment["config_id"])
        return True

    # Attributes --------------------------------------------------------
    def _resolve_attribute(self, name):
        """Any output value of the deployment, by its name: as the
        deployment holds it, else as it was when the deployment
        completed (a plugin built outside an action may not know its
        project)."""
        deployment = self._deployment() if self._tenant() else None
        if deployment is None:
            return (self._data.get("outputs") or {}).get(name)
        return (deployment["output_values"] or {}).get(name)


def _deploy_input(name, value, description):
    return {
        "name": name,
        "value": value,
        "description": description,
        "type": "String",
        "default": None,
        "replace_on_change": False,
    }
