"""OS::Neutron::Port, with Heat 27's schema (see ``neutron`` for how
requests are made and polled).

``network``, the ``subnet`` of each ``fixed_ips`` entry, the
``security_groups`` and ``qos_policy`` are found by name or ID;
``no_fixed_ips`` sends an empty ``fixed_ips``; ``replacement_policy:
REPLACE_ALWAYS`` replaces the port on every update.
"""

from heat_lite.common import exception
from heat_lite.resources import constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, neutron
from heat_lite.resources.openstack import implicit_depends as implicit


def _custom(name):
    return [constraints.CustomConstraint(name)]


FIXED_IP = {
    "subnet_id": p.Schema(
        p.STRING,
        "Subnet ID (deprecated: use subnet).",
        constraints=_custom("neutron.subnet"),
    ),
    "subnet": p.Schema(
        p.STRING,
        "Subnet in which to allocate the IP address for this port.",
        constraints=_custom("neutron.subnet"),
    ),
    "ip_address": p.Schema(
        p.STRING,
        "IP address desired in the subnet for this port.",
        constraints=_custom("ip_addr"),
    ),
}
ADDRESS_PAIR = {
    "mac_address": p.Schema(
        p.STRING,
        "MAC address to allow through this port.",
        constraints=_custom("mac_addr"),
    ),
    "ip_address": p.Schema(
        p.STRING,
        "IP address to allow through this port.",
        required=True,
        constraints=_custom("net_cidr"),
    ),
}


class Port(neutron.NeutronResource):
    """A Neutron port."""

    entity = "port"
    # Waits for the subnets of its network (Heat's add_dependencies).
    implicit_depends = staticmethod(implicit.port)
    local_props = neutron.NeutronResource.local_props + (
        "network",
        "network_id",
        "fixed_ips",
        "security_groups",
        "replacement_policy",
        "qos_policy",
        "no_fixed_ips",
    )
    properties_schema = {
        "name": p.Schema(
            p.STRING, "A symbolic name for this port.", update_allowed=True
        ),
        "network_id": p.Schema(
            p.STRING,
            "ID of the network (deprecated: use network).",
            constraints=_custom("neutron.network"),
        ),
        "network": p.Schema(
            p.STRING,
            "Network this port belongs to. Note if "
            "this changes to a different network update, "
            "the port will be replaced.",
            constraints=_custom("neutron.network"),
        ),
        "device_id": p.Schema(
            p.STRING,
            "Device ID of this port.",
            default="",
            update_allowed=True,
        ),
        "device_owner": p.Schema(
            p.STRING,
            "Name of the network owning the port.",
            default="",
            update_allowed=True,
        ),
        "fixed_ips": p.Schema(
            p.LIST,
            "Desired IPs for this port.",
            schema=p.Schema(p.MAP, schema=FIXED_IP),
            update_allowed=True,
        ),
        "security_groups": p.Schema(
            p.LIST,
            "Security group IDs to associate with this port.",
            update_allowed=True,
        ),
        "replacement_policy": p.Schema(
            p.STRING,
            "Policy on how to respond to a stack-update for this resource.",
            default="AUTO",
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(["REPLACE_ALWAYS", "AUTO"])
            ],
        ),
        "dns_name": p.Schema(
            p.STRING, "DNS name associated with the port.", update_allowed=True
        ),
        "tags": neutron.tags_schema("port"),
        "value_specs": p.Schema(
            p.MAP,
            "Extra parameters to include in the request.",
            default={},
            update_allowed=True,
        ),
        "admin_state_up": p.Schema(
            p.BOOLEAN,
            "The administrative state of this port.",
            default=True,
            update_allowed=True,
        ),
        "mac_address": p.Schema(
            p.STRING,
            "MAC address to give to this port.",
            constraints=_custom("mac_addr"),
            # Neutron changes it in place (as Heat updates it): a new
            # port would first have to take the fixed IPs this one holds.
            update_allowed=True,
        ),
        "allowed_address_pairs": p.Schema(
            p.LIST,
            "Additional MAC/IP address pairs allowed to pass through "
            "the port.",
            schema=p.Schema(p.MAP, schema=ADDRESS_PAIR),
            update_allowed=True,
        ),
        "binding:vnic_type": p.Schema(
            p.STRING,
            "The vnic type to be bound on the neutron port.",
            default="normal",
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(
                    [
                        "normal",
                        "direct",
                        "macvtap",
                        "direct-physical",
                        "baremetal",
                        "virtio-forwarder",
                        "smart-nic",
                        "remote-managed",
                    ]
                )
            ],
        ),
        "port_security_enabled": p.Schema(
            p.BOOLEAN,
            "Flag to enable/disable port security on the port.",
            update_allowed=True,
        ),
        "qos_policy": p.Schema(
            p.STRING,
            "The name or ID of QoS policy to attach to this port.",
            update_allowed=True,
            constraints=_custom("neutron.qos_policy"),
        ),
        "propagate_uplink_status": p.Schema(
            p.BOOLEAN,
            "Flag to enable/disable propagate uplink status on the port.",
            update_allowed=True,
        ),
        "no_fixed_ips": p.Schema(
            p.BOOLEAN,
            "Flag to disable all fixed ips on the port.",
            default=False,
            update_allowed=True,
        ),
    }
    attributes_schema = {
        name: p.Attribute(text, kind)
        for name, text, kind in (
            (
                "admin_state_up",
                "The administrative state of this port.",
                "STRING",
            ),
            ("device_id", "Unique identifier for the device.", "STRING"),
            ("device_owner", "Name of the network owning the port.", "STRING"),
            ("fixed_ips", "Fixed IP addresses.", "LIST"),
            ("mac_address", "MAC address of the port.", "STRING"),
            ("name", "Friendly name of the port.", "STRING"),
            (
                "network_id",
                "Unique identifier for the network owning the port.",
                "STRING",
            ),
            (
                "security_groups",
                "A list of security groups for the port.",
                "LIST",
            ),
            ("status", "The status of the port.", "STRING"),
            ("tenant_id", "Tenant owning the port.", "STRING"),
            (
                "allowed_address_pairs",
                "Additional MAC/IP address pairs "
                "allowed to pass through a port.",
                "LIST",
            ),
            ("subnets", "Subnets of this network.", "LIST"),
            (
                "port_security_enabled",
                "Port security enabled of the port.",
                "BOOLEAN",
            ),
            (
                "qos_policy_id",
                "The QoS policy ID attached to this port.",
                "STRING",
            ),
            ("dns_assignment", "The DNS assigned to this port.", "MAP"),
            (
                "network",
                "The attributes of the network owning the port.",
                "MAP",
            ),
            (
                "propagate_uplink_status",
                "Enable/Disable propagate uplink status for the port.",
                "BOOLEAN",
            ),
        )
    }

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        given = {k for k in ("network", "network_id") if props.get(k)}
        if not given and not {"network", "network_id"} & set(unresolved):
            raise exception.StackValidationFailed(
                path=path, msg='Property "network" not assigned'
            )
        return props

    def _find(self, kind, name_or_id):
        finder = getattr(client.connection(self).network, "find_" + kind)
        return finder(name_or_id, ignore_missing=False).id

    def _linked(self, props, names):
        """Neutron fields for the properties among ``names`` that name
        other resources."""
        body = {}
        if "fixed_ips" in names or "no_fixed_ips" in names:
            if props.get("no_fixed_ips"):
                body["fixed_ips"] = []
            elif props.get("fixed_ips") is not None:
                body["fixed_ips"] = [
                    self._fixed_ip(f) for f in props["fixed_ips"]
                ]
        if (
            "security_groups" in names
            and props.get("security_groups") is not None
        ):
            body["security_groups"] = [
                self._find("security_group", sg)
                for sg in props["security_groups"]
            ]
        if "qos_policy" in names:
            body["qos_policy_id"] = (
                self._find("qos_policy", props["qos_policy"])
                if props.get("qos_policy")
                else None
            )
        return body

    def _fixed_ip(self, entry):
        fixed = {}
        subnet = entry.get("subnet") or entry.get("subnet_id")
        if subnet:
            fixed["subnet_id"] = self._find("subnet", subnet)
        if entry.get("ip_address"):
            fixed["ip_address"] = entry["ip_address"]
        return fixed

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        body["network_id"] = self._find(
            "network", props.get("network") or props.get("network_id")
        )
        body.update(self._linked(props, set(props)))
        if not props.get("qos_policy"):
            body.pop("qos_policy_id", None)
        return body

    def _prepare_update(self, new_props, prop_diff):
        body = super()._prepare_update(new_props, prop_diff)
        body.update(self._linked(new_props, prop_diff))
        return body

    def needs_replace(self, new_props, prop_diff):
        if new_props.get("replacement_policy") == "REPLACE_ALWAYS":
            return True
        return super().needs_replace(new_props, prop_diff)

    def _resolve_attribute(self, name):
        live = self._attribute_source()
        if live is None:
            return None
        net_api = client.connection(self).network
        if name == "subnets":
            return [
                net_api.get_subnet(f["subnet_id"]).to_dict()
                for f in live.get("fixed_ips") or ()
            ]
        if name == "network":
            return net_api.get_network(live["network_id"]).to_dict()
        return super()._resolve_attribute(name)
