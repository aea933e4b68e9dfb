"""OS::Neutron::FloatingIP (Heat 27's schema; see ``neutron`` for how
requests are made and polled).

``floating_network`` and ``floating_subnet`` are found by name or ID;
the deprecated ``floating_network_id`` is taken as ``floating_network``
(both: 400).
``port_id`` and ``fixed_ip_address`` change in place: removing
``port_id`` disassociates the address. A floating IP stays DOWN in a
cloud without an L3 agent, which counts as built (as in Heat).
"""

from heat_lite.resources import constraints, transient
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, neutron
from heat_lite.resources.openstack import implicit_depends as implicit


def _custom(name):
    return [constraints.CustomConstraint(name)]


def _port_id(required):
    return p.Schema(
        p.STRING,
        "ID of an existing port with at least one IP address to "
        "associate with this floating IP.",
        required=required,
        update_allowed=True,
        constraints=_custom("neutron.port"),
    )


def _fixed_ip_address():
    return p.Schema(
        p.STRING,
        "IP address to use if the port has multiple addresses.",
        update_allowed=True,
        constraints=_custom("ip_addr"),
    )


class FloatingIP(neutron.NeutronResource):
    """A Neutron floating IP."""

    entity = "floatingip"
    # Waits for its routers and router interfaces (Heat's add_dependencies).
    implicit_depends = staticmethod(implicit.floating_ip)
    local_props = neutron.NeutronResource.local_props + (
        "floating_network",
        "floating_subnet",
    )
    # Heat's hidden alias (deprecated in 2014.2), taken as floating_network.
    deprecated_properties = {"floating_network_id": "floating_network"}
    properties_schema = {
        "floating_network": p.Schema(
            p.STRING,
            "Network to allocate floating IP from.",
            required=True,
            constraints=_custom("neutron.network"),
        ),
        "floating_subnet": p.Schema(
            p.STRING,
            "Subnet to allocate floating IP from.",
            constraints=_custom("neutron.subnet"),
        ),
        "value_specs": p.Schema(
            p.MAP,
            "Extra parameters to include in the "
            '"floatingip" object in the creation '
            "request.",
            default={},
        ),
        "port_id": _port_id(required=False),
        "fixed_ip_address": _fixed_ip_address(),
        "floating_ip_address": p.Schema(
            p.STRING,
            "IP address of the floating IP.",
            constraints=_custom("ip_addr"),
        ),
        "dns_name": p.Schema(
            p.STRING, "DNS name associated with floating ip."
        ),
        "dns_domain": p.Schema(
            p.STRING,
            "DNS domain associated with floating ip.",
            constraints=_custom("dns_domain"),
        ),
    }
    attributes_schema = {
        "router_id": p.Attribute(
            "ID of the router used as gateway, set when "
            "associated with a port.",
            "STRING",
        ),
        "tenant_id": p.Attribute(
            "The tenant owning this floating IP.", "STRING"
        ),
        "floating_network_id": p.Attribute(
            "ID of the network in which this IP is allocated.", "STRING"
        ),
        "fixed_ip_address": p.Attribute(
            "IP address of the associated port, if specified.", "STRING"
        ),
        "floating_ip_address": p.Attribute(
            "The allocated address of this IP.", "STRING"
        ),
        "port_id": p.Attribute(
            "ID of the port associated with this IP.", "STRING"
        ),
    }

    def _find(self, kind, name_or_id):
        finder = getattr(client.connection(self).network, "find_" + kind)
        return finder(name_or_id, ignore_missing=False).id

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        # A floating IP has no name.
        body.pop("name", None)
        body["floating_network_id"] = self._find(
            "network", props["floating_network"]
        )
        if props.get("floating_subnet"):
            body["subnet_id"] = self._find("subnet", props["floating_subnet"])
        return body

    def _prepare_update(self, new_props, prop_diff):
        # Sent even when unset: no port_id disassociates.
        return {
            k: new_props.get(k)
            for k in ("port_id", "fixed_ip_address")
            if k in prop_diff
        }


class FloatingIPAssociation(neutron.NeutronResource):
    """A floating IP made elsewhere, associated with a port (Heat's
    ``OS::Neutron::FloatingIPAssociation``): create associates, delete
    disassociates, and every property changes in place (a new floating
    IP: the old one is disassociated first). Its physical ID is
    ``<floating IP ID>:<port ID>``."""

    entity = "floatingip"
    # Waits for the router interfaces of its port's subnet, as Heat's.
    implicit_depends = staticmethod(implicit.floating_ip_association)
    properties_schema = {
        "floatingip_id": p.Schema(
            p.STRING,
            "ID of the floating IP to associate.",
            required=True,
            update_allowed=True,
        ),
        "port_id": _port_id(required=True),
        "fixed_ip_address": _fixed_ip_address(),
    }
    attributes_schema = {}

    def _associate(self, props):
        self._request(
            "PUT",
            "/" + props["floatingip_id"],
            {
                "floatingip": {
                    "port_id": props["port_id"],
                    "fixed_ip_address": props.get("fixed_ip_address"),
                }
            },
        )
        self.resource_id_set(
            "%s:%s" % (props["floatingip_id"], props["port_id"])
        )

    def _disassociate(self, floatingip_id):
        try:
            self._request(
                "PUT", "/" + floatingip_id, {"floatingip": {"port_id": None}}
            )
        except client.sdk_exc.NotFoundException:
            pass  # the floating IP is gone: nothing is associated

    def _fetch(self):
        if self._live is None:
            floatingip_id = self.resource_id.split(":", 1)[0]
            self._live = self._request("GET", "/" + floatingip_id)[self.entity]
        return self._live

    def handle_create(self):
        self._associate(self.properties)
        return None

    @transient.polled
    def check_create_complete(self, cookie):
        return True  # Neutron associates in the request

    def handle_update(self, new_props, prop_diff):
        old = self.properties.get("floatingip_id")
        if "floatingip_id" in prop_diff and old:
            self._disassociate(old)
        self._associate(new_props)
        self.properties = new_props
        return None

    @transient.polled
    def check_update_complete(self, cookie):
        return True

    def handle_delete(self):
        if self.resource_id:
            self._disassociate(self.properties["floatingip_id"])
        return None

    @transient.polled
    def check_delete_complete(self, cookie):
        return True

    def handle_check(self):
        """The floating IP gone, or associated with another port, fails
        the check (the next update associates it again)."""
        super().handle_check()
        live = self._fetch()
        if live.get("port_id") != self.properties["port_id"]:
            raise client.ResourceInError(
                resource_status="port %s" % live.get("port_id"),
                status_reason="floating IP %s is not associated with "
                "port %s" % (live["id"], self.properties["port_id"]),
            )
