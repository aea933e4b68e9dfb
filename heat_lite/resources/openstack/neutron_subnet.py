"""OS::Neutron::Subnet, with Heat 27's schema (see ``neutron`` for how
requests are made and polled)."""

from heat_lite.common import exception
from heat_lite.resources import constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, neutron


def _pool_schema():
    ip = [constraints.CustomConstraint("ip_addr")]
    return p.Schema(
        p.MAP,
        schema={
            "start": p.Schema(
                p.STRING,
                "Start address for the allocation pool.",
                required=True,
                constraints=ip,
            ),
            "end": p.Schema(
                p.STRING,
                "End address for the allocation pool.",
                required=True,
                constraints=ip,
            ),
        },
    )


def route_schema(destination="The destination for static route."):
    """A route's schema (a subnet's host route, an extra route)."""
    return p.Schema(
        p.MAP,
        schema={
            "destination": p.Schema(
                p.STRING,
                destination,
                required=True,
                constraints=[constraints.CustomConstraint("net_cidr")],
            ),
            "nexthop": p.Schema(
                p.STRING,
                "The next hop for the destination.",
                required=True,
                constraints=[constraints.CustomConstraint("ip_addr")],
            ),
        },
    )


_IPV6_MODES = ["dhcpv6-stateful", "dhcpv6-stateless", "slaac"]


class Subnet(neutron.NeutronResource):
    """A Neutron subnet."""

    entity = "subnet"
    local_props = neutron.NeutronResource.local_props + (
        "network",
        "network_id",
        "subnetpool",
        "segment",
    )
    properties_schema = {
        "network_id": p.Schema(
            p.STRING,
            "ID of the network (deprecated: use network).",
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        "network": p.Schema(
            p.STRING,
            "The ID of the attached network.",
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        "subnetpool": p.Schema(
            p.STRING,
            "The name or ID of the subnet pool.",
            constraints=[constraints.CustomConstraint("neutron.subnetpool")],
        ),
        "prefixlen": p.Schema(
            p.INTEGER,
            "Prefix length for subnet allocation from subnet pool.",
            constraints=[constraints.Range(min=0)],
        ),
        "cidr": p.Schema(
            p.STRING,
            "The CIDR.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        "value_specs": p.Schema(
            p.MAP,
            "Extra parameters to include in the request.",
            default={},
            update_allowed=True,
        ),
        "name": p.Schema(
            p.STRING, "The name of the subnet.", update_allowed=True
        ),
        "ip_version": p.Schema(
            p.INTEGER,
            "The IP version, which is 4 or 6.",
            default=4,
            constraints=[constraints.AllowedValues([4, 6])],
        ),
        "dns_nameservers": p.Schema(
            p.LIST,
            "A specified set of DNS name servers to be used.",
            default=[],
            update_allowed=True,
        ),
        "gateway_ip": p.Schema(
            p.STRING,
            "The gateway IP address. Set to "
            'any of [ null | ~ | "" ] to create/update a '
            "subnet without a gateway. If omitted when "
            "creation, neutron will assign the first free "
            "IP address within the subnet to the gateway "
            "automatically.",
            update_allowed=True,
        ),
        "enable_dhcp": p.Schema(
            p.BOOLEAN,
            "Set to true if DHCP is enabled and false if DHCP is disabled.",
            default=True,
            update_allowed=True,
        ),
        "allocation_pools": p.Schema(
            p.LIST,
            "The start and end addresses for the allocation pools.",
            schema=_pool_schema(),
            update_allowed=True,
        ),
        "tenant_id": p.Schema(
            p.STRING, "The ID of the tenant who owns the network."
        ),
        "host_routes": p.Schema(
            p.LIST,
            "A list of host route dictionaries for the subnet.",
            schema=route_schema(),
            update_allowed=True,
        ),
        "ipv6_ra_mode": p.Schema(
            p.STRING,
            "IPv6 RA (Router Advertisement) mode.",
            constraints=[constraints.AllowedValues(_IPV6_MODES)],
        ),
        "ipv6_address_mode": p.Schema(
            p.STRING,
            "IPv6 address mode.",
            constraints=[constraints.AllowedValues(_IPV6_MODES)],
        ),
        "segment": p.Schema(
            p.STRING,
            "The name/ID of the segment to associate.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.segment")],
        ),
        "tags": neutron.tags_schema("subnet"),
    }
    attributes_schema = {
        "name": p.Attribute("Friendly name of the subnet.", "STRING"),
        "network_id": p.Attribute("Parent network of the subnet.", "STRING"),
        "tenant_id": p.Attribute("Tenant owning the subnet.", "STRING"),
        "allocation_pools": p.Attribute(
            "Ip allocation pools and their ranges.", "LIST"
        ),
        "gateway_ip": p.Attribute("Ip of the subnet's gateway.", "STRING"),
        "host_routes": p.Attribute(
            "Additional routes for this subnet.", "LIST"
        ),
        "ip_version": p.Attribute("Ip version for the subnet.", "STRING"),
        "cidr": p.Attribute("CIDR block notation for this subnet.", "STRING"),
        "dns_nameservers": p.Attribute("List of dns nameservers.", "LIST"),
        "enable_dhcp": p.Attribute(
            "'true' if DHCP is enabled for this subnet; 'false' otherwise.",
            "STRING",
        ),
    }

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        if not (
            {"network", "network_id"}
            & (
                set(unresolved)
                | {k for k in ("network", "network_id") if props.get(k)}
            )
        ):
            raise exception.StackValidationFailed(
                path=path, msg='Property "network" not assigned'
            )
        if not (
            props.get("cidr")
            or props.get("subnetpool")
            or {"cidr", "subnetpool"} & set(unresolved)
        ):
            raise exception.StackValidationFailed(
                path=path,
                msg="At least one of the following properties "
                "must be specified: cidr, subnetpool.",
            )
        return props

    def _find(self, kind, name_or_id):
        finder = getattr(client.connection(self).network, "find_" + kind)
        return finder(name_or_id, ignore_missing=False).id

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        body["network_id"] = self._find(
            "network", props.get("network") or props.get("network_id")
        )
        if props.get("subnetpool"):
            body["subnetpool_id"] = self._find(
                "subnet_pool", props["subnetpool"]
            )
        if props.get("segment"):
            body["segment_id"] = self._find("segment", props["segment"])
        if props.get("gateway_ip") == "":
            body["gateway_ip"] = None
        return body

    def _prepare_update(self, new_props, prop_diff):
        body = super()._prepare_update(new_props, prop_diff)
        if "gateway_ip" in prop_diff and not new_props.get("gateway_ip"):
            body["gateway_ip"] = None
        # A list the template no longer gives is emptied, as Heat does:
        # left out of the request, Neutron would keep the old one.
        for key in ("allocation_pools", "host_routes", "dns_nameservers"):
            if key in prop_diff and not new_props.get(key):
                body[key] = []
        if "segment" in prop_diff:
            body["segment_id"] = (
                self._find("segment", new_props["segment"])
                if new_props.get("segment")
                else None
            )
        return body
