"""OS::Neutron::Router and OS::Neutron::RouterInterface (Heat 27's
schemas; see ``neutron`` for how requests are made and polled).

A router's ``external_gateway_info.network`` and the ``subnet`` of its
``external_fixed_ips`` are found by name or ID; the L3 agent properties
are refused (the cloud runs no agents heat_lite could schedule on). An
interface's physical ID is ``<router id>:subnet_id=<id>`` or
``<router id>:port_id=<id>``, as in Heat; removing one that is already
gone succeeds. Its deprecated ``router_id``, ``subnet_id`` and
``port_id`` are taken as ``router``, ``subnet`` and ``port`` (an old and
a new name both given: 400).
"""

from heat_lite.common import exception
from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, live_neutron, neutron
from heat_lite.resources.openstack import implicit_depends as implicit
from heat_lite.resources.openstack.client import sdk_exc


def _custom(name):
    return [constraints.CustomConstraint(name)]


GATEWAY = {
    "network": p.Schema(
        p.STRING,
        "ID or name of the external network for the gateway.",
        required=True,
        update_allowed=True,
        constraints=_custom("neutron.network"),
    ),
    "enable_snat": p.Schema(
        p.BOOLEAN,
        "Enables Source NAT on the router gateway.",
        update_allowed=True,
    ),
    "external_fixed_ips": p.Schema(
        p.LIST,
        "External fixed IP addresses for the gateway.",
        update_allowed=True,
        schema=p.Schema(
            p.MAP,
            schema={
                "ip_address": p.Schema(
                    p.STRING,
                    "External fixed IP address.",
                    constraints=_custom("ip_addr"),
                ),
                "subnet": p.Schema(
                    p.STRING,
                    "Subnet of external fixed IP address.",
                    constraints=_custom("neutron.subnet"),
                ),
            },
        ),
    ),
}


def _find(plugin, kind, name_or_id):
    finder = getattr(client.connection(plugin).network, "find_" + kind)
    return finder(name_or_id, ignore_missing=False).id


class Router(neutron.NeutronResource):
    """A Neutron router."""

    entity = "router"
    # Waits for the subnets of its gateway network (Heat's add_dependencies).
    implicit_depends = staticmethod(implicit.router)
    local_props = neutron.NeutronResource.local_props + (
        "external_gateway_info",
        "l3_agent_id",
        "l3_agent_ids",
    )
    properties_schema = {
        "name": p.Schema(
            p.STRING, "The name of the router.", update_allowed=True
        ),
        "external_gateway_info": p.Schema(
            p.MAP,
            "External network gateway configuration for a router.",
            schema=GATEWAY,
            update_allowed=True,
        ),
        "value_specs": p.Schema(
            p.MAP,
            "Extra parameters to include in the creation request.",
            default={},
            update_allowed=True,
        ),
        "admin_state_up": p.Schema(
            p.BOOLEAN,
            "The administrative state of the router.",
            default=True,
            update_allowed=True,
        ),
        "l3_agent_id": p.Schema(
            p.STRING,
            "ID of the L3 agent (deprecated: use l3_agent_ids).",
            update_allowed=True,
        ),
        "l3_agent_ids": p.Schema(
            p.LIST,
            "ID list of the L3 agent.",
            update_allowed=True,
            schema=p.Schema(p.STRING),
        ),
        "distributed": p.Schema(
            p.BOOLEAN,
            "Indicates whether or not to create a distributed router.",
        ),
        "ha": p.Schema(
            p.BOOLEAN,
            "Indicates whether or not to create a highly available router.",
        ),
        "availability_zone_hints": p.Schema(
            p.LIST,
            "Availability zone candidates for the router.",
            schema=p.Schema(p.STRING),
        ),
        "tags": neutron.tags_schema("router"),
        "tenant_id": p.Schema(
            p.STRING, "The ID of the tenant which will own the router."
        ),
    }
    attributes_schema = {
        "status": p.Attribute("The status of the router.", "STRING"),
        "external_gateway_info": p.Attribute(
            "Gateway network for the router.", "MAP"
        ),
        "name": p.Attribute("Friendly name of the router.", "STRING"),
        "admin_state_up": p.Attribute(
            "Administrative state of the router.", "STRING"
        ),
        "tenant_id": p.Attribute("Tenant owning the router.", "STRING"),
    }

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        for key in ("l3_agent_id", "l3_agent_ids"):
            if props.get(key):
                raise exception.StackValidationFailed(
                    path="%s.%s" % (path, key),
                    msg="%s is not supported: the cloud has no L3 agents "
                    "heat_lite can schedule on" % key,
                )
        return props

    def _gateway(self, info):
        if not info:
            return None
        gateway = {"network_id": _find(self, "network", info["network"])}
        if info.get("enable_snat") is not None:
            gateway["enable_snat"] = info["enable_snat"]
        if info.get("external_fixed_ips") is not None:
            gateway["external_fixed_ips"] = [
                dict(
                    {"ip_address": f["ip_address"]}
                    if f.get("ip_address")
                    else {},
                    **(
                        {"subnet_id": _find(self, "subnet", f["subnet"])}
                        if f.get("subnet")
                        else {}
                    ),
                )
                for f in info["external_fixed_ips"]
            ]
        return gateway

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        gateway = self._gateway(props.get("external_gateway_info"))
        if gateway:
            body["external_gateway_info"] = gateway
        return body

    def _prepare_update(self, new_props, prop_diff):
        body = super()._prepare_update(new_props, prop_diff)
        if "external_gateway_info" in prop_diff:
            body["external_gateway_info"] = (
                self._gateway(new_props.get("external_gateway_info")) or {}
            )
        return body


class RouterInterface(base.Resource):
    """A router's interface on a subnet or a port."""

    # Heat's hidden aliases (deprecated in 2014.2 and 2015.1).
    deprecated_properties = {
        "router_id": "router",
        "subnet_id": "subnet",
        "port_id": "port",
    }
    properties_schema = {
        "router": p.Schema(
            p.STRING,
            "The router.",
            required=True,
            constraints=_custom("neutron.router"),
        ),
        "subnet": p.Schema(
            p.STRING,
            "The subnet, either subnet or port should be specified.",
            constraints=_custom("neutron.subnet"),
        ),
        "port": p.Schema(
            p.STRING,
            "The port, either subnet or port should be specified.",
            constraints=_custom("neutron.port"),
        ),
    }
    attributes_schema = {}

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        values, unresolved = p.translate(
            cls.deprecated_properties, values, path, unresolved
        )
        props = super().validate_properties(values, path, unresolved)
        given = {
            k for k in ("subnet", "port") if props.get(k) or k in unresolved
        }
        if len(given) != 1:
            raise exception.StackValidationFailed(
                path=path,
                msg="Exactly one of the following properties "
                "must be specified: subnet, port.",
            )
        return props

    def _call(self, router_id, action, key, value):
        response = client.connection(self).network.request(
            "/routers/%s/%s_router_interface" % (router_id, action),
            "PUT",
            json={key: value},
        )
        sdk_exc.raise_from_response(response)

    def handle_create(self):
        router_id = _find(self, "router", self.properties["router"])
        if self.properties.get("subnet"):
            key, value = (
                "subnet_id",
                _find(self, "subnet", self.properties["subnet"]),
            )
        else:
            key, value = (
                "port_id",
                _find(self, "port", self.properties["port"]),
            )
        self._call(router_id, "add", key, value)
        self.resource_id_set("%s:%s=%s" % (router_id, key, value))

    def live_state(self):
        """Drift detection's view (``live_neutron``)."""
        return live_neutron.router_interface_state(self)

    def handle_delete(self):
        if not self.resource_id:
            return
        router_id, _, rest = self.resource_id.partition(":")
        key, _, value = rest.partition("=")
        try:
            self._call(router_id, "remove", key, value)
        except sdk_exc.NotFoundException:
            pass
