"""OS::Neutron::Net (and the base of the other Neutron types), with Heat
27's schemas.

Requests go to Neutron's REST API as Heat sends them (a ``{"network":
{...}}`` body, ``value_specs`` merged in unchanged) through the
openstacksdk connection's network adapter, so extension attributes pass
through. A property left unset is not sent; ``name`` defaults to the
physical resource name. Create waits (by polling) for a network to
leave BUILD; delete counts a 404 as done and then polls until Neutron no
longer shows the resource. Attributes are the fields of Neutron's own
representation, read once per action.
"""

import time

from heat_lite.common import exception
from heat_lite.resources import base, constraints, transient
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, live_neutron
from heat_lite.resources.openstack.client import sdk_exc

# HTTP statuses a delete tries again for a while.
TRANSIENT = (409, 503)


def _value_specs_schema():
    return p.Schema(
        p.MAP,
        "Extra parameters to include in the request. "
        "Parameters are often specific to installed hardware "
        "or extensions.",
        default={},
        update_allowed=True,
    )


def tags_schema(entity):
    return p.Schema(
        p.LIST,
        "The tags to be added to the %s." % entity,
        schema=p.Schema(p.STRING),
        update_allowed=True,
    )


class NeutronResource(base.Resource):
    """What Net and Subnet share: REST calls, polling, attributes."""

    # The REST collection ("networks") and the body key ("network").
    entity = None
    # The REST collection when it is not ``entity + "s"``.
    collection = None
    # Template properties that are not Neutron fields.
    local_props = ("value_specs", "tags")
    # Template property -> Neutron field, where they differ.
    renamed = {"tenant_id": "project_id"}
    _live = None

    @property
    def default_poll_interval(self):
        return client.CONF.openstack.poll_interval

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        specs = props.get("value_specs") or {}
        banned = {"shared", "tenant_id"}.union(cls.properties_schema)
        found = sorted(banned.intersection(specs))
        if found:
            raise exception.StackValidationFailed(
                path="%s.value_specs" % path,
                msg="%s not allowed in value_specs" % ", ".join(found),
            )
        return props

    # REST ----------------------------------------------------------------
    def _api(self):
        return client.connection(self).network

    def _request(self, method, path, body=None):
        response = self._api().request(
            "/%s%s" % (self._collection(), path), method, json=body
        )
        sdk_exc.raise_from_response(response)
        return response.json() if response.content else {}

    def _collection(self):
        return self.collection or self.entity + "s"

    def _fetch(self):
        """Neutron's view of the resource (cached for this action)."""
        if self._live is None:
            self._live = self._request("GET", "/" + self.resource_id)[
                self.entity
            ]
        return self._live

    def _body(self, props, names):
        """The Neutron fields for the properties ``names`` of ``props``."""
        body = {}
        for key in names:
            value = props.get(key)
            if key in self.local_props or value is None:
                continue
            body[self.renamed.get(key, key)] = value
        body.update(props.get("value_specs") or {})
        return body

    def _prepare_create(self, props):
        """Hook: turn names into IDs etc.; return the create body."""
        body = self._body(props, props)
        body.setdefault("name", self.physical_resource_name())
        return body

    def _prepare_update(self, new_props, prop_diff):
        body = self._body(new_props, prop_diff - {"value_specs"})
        if "name" in prop_diff and new_props.get("name") is None:
            body["name"] = self.physical_resource_name()
        if "value_specs" in prop_diff:
            old = self.properties.get("value_specs") or {}
            body.update(
                {
                    k: v
                    for k, v in new_props["value_specs"].items()
                    if old.get(k) != v
                }
            )
        return body

    # Actions -------------------------------------------------------------
    def handle_create(self):
        body = self._prepare_create(self.properties)
        made = self._request("POST", "", {self.entity: body})[self.entity]
        self.resource_id_set(made["id"])
        self._live = made
        if self.properties.get("tags"):
            self._set_tags(self.properties["tags"])
        return True

    @transient.polled
    def check_create_complete(self, cookie):
        self._live = None
        return self._built(self._fetch())

    def handle_update(self, new_props, prop_diff):
        body = self._prepare_update(new_props, set(prop_diff))
        if body:
            self._request("PUT", "/" + self.resource_id, {self.entity: body})
        if "tags" in prop_diff:
            self._set_tags(new_props.get("tags") or [])
        self.properties = new_props
        return True

    @transient.polled
    def check_update_complete(self, cookie):
        return self.check_create_complete(cookie)

    def handle_delete(self):
        if not self.resource_id:
            return None
        limit = client.CONF.openstack.transient_retry_timeout
        return self._try_delete(
            {"until": time.monotonic() + limit, "wait": 0.5}
        )

    def _try_delete(self, state):
        """Ask Neutron to delete; a 409 or 503 (a port still being
        removed by Nova, a busy server) is tried again later by
        check_delete_complete until ``until``, then fails with Neutron's
        message."""
        try:
            self._request("DELETE", "/" + self.resource_id)
        except sdk_exc.NotFoundException:
            return None
        except sdk_exc.HttpException as exc:
            if exc.status_code not in TRANSIENT or (
                time.monotonic() > state["until"]
            ):
                raise
            state["pending"] = True
            return state
        state["pending"] = False
        return state

    @transient.polled
    def check_delete_complete(self, state):
        if not state:
            return True
        if state["pending"]:
            wait = state["wait"]
            state["wait"] = min(wait * 2, 5.0)
            if self._try_delete(state) is None:
                return True
            if state["pending"]:
                raise base.PollDelay(wait)
        try:
            self._live = None
            self._fetch()
        except sdk_exc.NotFoundException:
            return True
        return False

    def handle_check(self):
        """A resource deleted out of band, or in an error status, fails
        the stack check (and the next update replaces it)."""
        if not self.resource_id:
            return
        try:
            self._built(self._fetch())
        except sdk_exc.NotFoundException:
            raise client.NotFound(
                message="The %s (%s) could not be found."
                % (self.entity, self.resource_id)
            ) from None

    def live_state(self):
        """Drift detection's view (``live_neutron``)."""
        return live_neutron.neutron_state(self)

    def _set_tags(self, tags):
        response = self._api().request(
            "/%s/%s/tags" % (self._collection(), self.resource_id),
            "PUT",
            json={"tags": list(tags)},
        )
        sdk_exc.raise_from_response(response)

    @staticmethod
    def _built(live):
        status = live.get("status")
        if status is None or status in ("ACTIVE", "DOWN"):
            return True
        if status == "BUILD":
            return False
        if status in ("ERROR", "DEGRADED"):
            raise client.ResourceInError(
                resource_status=status, status_reason="Unknown"
            )
        raise client.ResourceUnknownStatus(
            result="Resource is not built",
            resource_status=status,
            status_reason="Unknown",
        )

    # Attributes ----------------------------------------------------------
    def get_reference_id(self):
        return self.resource_id

    def _attribute_source(self):
        if not self.resource_id:
            return None
        try:
            return self._fetch()
        except sdk_exc.NotFoundException:
            return None

    def _resolve_attribute(self, name):
        live = self._attribute_source()
        if live is None:
            return None
        if name == "tenant_id":
            return live.get("tenant_id", live.get("project_id"))
        return live.get(name)

    def _show_resource(self):
        return self._attribute_source()


class Net(NeutronResource):
    """A Neutron network."""

    entity = "network"
    local_props = NeutronResource.local_props + (
        "dhcp_agent_ids",
        "qos_policy",
    )
    properties_schema = {
        "name": p.Schema(
            p.STRING,
            "A string specifying a symbolic name for "
            "the network, which is not required to be unique.",
            update_allowed=True,
        ),
        "value_specs": _value_specs_schema(),
        "admin_state_up": p.Schema(
            p.BOOLEAN,
            "A boolean value specifying "
            "the administrative status of the "
            "network.",
            default=True,
            update_allowed=True,
        ),
        "tenant_id": p.Schema(
            p.STRING,
            "The ID of the tenant which will own "
            "the network. Only administrative users can "
            "set the tenant identifier.",
        ),
        "shared": p.Schema(
            p.BOOLEAN,
            "Whether this network should be shared across all tenants.",
            default=False,
            update_allowed=True,
        ),
        "dhcp_agent_ids": p.Schema(
            p.LIST,
            "The IDs of the DHCP agent to schedule the network.",
            update_allowed=True,
        ),
        "port_security_enabled": p.Schema(
            p.BOOLEAN,
            "Flag to enable/disable port security on the network.",
            update_allowed=True,
        ),
        "qos_policy": p.Schema(
            p.STRING,
            "The name or ID of QoS policy to attach to this network.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.qos_policy")],
        ),
        "dns_domain": p.Schema(
            p.STRING,
            "DNS domain associated with this network.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("dns_domain")],
        ),
        "availability_zone_hints": p.Schema(
            p.LIST, "Availability zone candidates for the network."
        ),
        "tags": tags_schema("network"),
    }
    attributes_schema = {
        "status": p.Attribute("The status of the network.", "STRING"),
        "name": p.Attribute("The name of the network.", "STRING"),
        "subnets": p.Attribute("Subnets of this network.", "LIST"),
        "admin_state_up": p.Attribute(
            "The administrative status of the network.", "STRING"
        ),
        "tenant_id": p.Attribute("The tenant owning this network.", "STRING"),
        "port_security_enabled": p.Attribute(
            "Port security enabled of the network.", "BOOLEAN"
        ),
        "mtu": p.Attribute(
            "The maximum transmission unit size(in bytes) for the network.",
            "INTEGER",
        ),
        "qos_policy_id": p.Attribute(
            "The QoS policy ID attached to this network.", "STRING"
        ),
        "l2_adjacency": p.Attribute(
            "A boolean value for L2 adjacency.", "BOOLEAN"
        ),
        "segments": p.Attribute("The segments of this network.", "LIST"),
    }

    def _qos_policy_id(self, name_or_id):
        if not name_or_id:
            return None
        return (
            client.connection(self)
            .network.find_qos_policy(name_or_id, ignore_missing=False)
            .id
        )

    def _prepare_create(self, props):
        if props.get("dhcp_agent_ids"):
            raise exception.NotSupported(
                feature="dhcp_agent_ids of OS::Neutron::Net"
            )
        body = super()._prepare_create(props)
        if props.get("qos_policy"):
            body["qos_policy_id"] = self._qos_policy_id(props["qos_policy"])
        return body

    def _prepare_update(self, new_props, prop_diff):
        if "dhcp_agent_ids" in prop_diff and new_props.get("dhcp_agent_ids"):
            raise exception.NotSupported(
                feature="dhcp_agent_ids of OS::Neutron::Net"
            )
        body = super()._prepare_update(new_props, prop_diff)
        if "qos_policy" in prop_diff:
            body["qos_policy_id"] = self._qos_policy_id(
                new_props.get("qos_policy")
            )
        return body

    def _resolve_attribute(self, name):
        if name == "segments":
            live = self._attribute_source()
            if live is None:
                return None
            return live.get("segments") or [
                {
                    k: live.get("provider:" + k)
                    for k in (
                        "network_type",
                        "physical_network",
                        "segmentation_id",
                    )
                }
            ]
        return super()._resolve_attribute(name)
