"""The live state of the Neutron types for drift detection
(``Resource.live_state``; ``engine.drift`` compares it).

One GET of the resource (``NeutronResource._fetch``; a 404 is
``ResourceGone``), then per entity the properties its drift covers
(``COVERED``): plain fields as Neutron shows them; properties that name
other resources (``REFERENCES``) come back as the record stores them
(a name) when they still name the same resource, else as Neutron's ID;
tags and a port's security groups compare as sets; a security group's
``rules`` compare by the plugin's own rule key, Neutron's default egress
rules counting only when the template's rules had an egress rule (as
the plugin creates them); a trunk's ``sub_ports`` compare as a set of
(port, segmentation type, segmentation ID), ports by name or ID. A
security group rule has no update in Neutron: its only drift is being
deleted (or its group's, which deletes it). A floating IP association
reads its floating IP: the ``port_id`` it has (None once disassociated)
and its ``fixed_ip_address``. A router interface (its physical ID is
``<router>:subnet_id=<id>`` or ``<router>:port_id=<id>``) is one list
of the router's ports: DELETED when none of them is its port or on its
subnet, else in sync (its properties cannot change in place). An
extra route set (its physical ID is its router's) is one GET of the
router: its ``routes`` are the template's routes the router still has
(a route removed is drift; another route of the router is not the
set's).
"""

from heat_lite.resources import base
from heat_lite.resources.openstack import client

sdk_exc = client.sdk_exc

# entity -> the plain properties compared (Neutron field of that name).
COVERED = {
    "network": (
        "name",
        "admin_state_up",
        "shared",
        "port_security_enabled",
        "dns_domain",
    ),
    "subnet": (
        "name",
        "cidr",
        "ip_version",
        "enable_dhcp",
        "gateway_ip",
        "dns_nameservers",
        "allocation_pools",
        "host_routes",
    ),
    "port": (
        "name",
        "admin_state_up",
        "mac_address",
        "device_id",
        "device_owner",
        "port_security_enabled",
    ),
    "security_group": ("name", "description", "stateful"),
    "router": ("name", "admin_state_up"),
    "floatingip": ("port_id", "fixed_ip_address", "floating_ip_address"),
    "security_group_rule": (
        "description",
        "direction",
        "ethertype",
        "protocol",
        "port_range_min",
        "port_range_max",
        "remote_ip_prefix",
    ),
    "trunk": ("name", "description", "admin_state_up"),
}
# entity -> {property: (kind found by name or ID, Neutron field)}.
REFERENCES = {
    "subnet": {
        "network": ("network", "network_id"),
        "network_id": ("network", "network_id"),
    },
    "port": {
        "network": ("network", "network_id"),
        "network_id": ("network", "network_id"),
    },
    "floatingip": {"floating_network": ("network", "floating_network_id")},
    "security_group_rule": {
        "security_group": ("security_group", "security_group_id"),
        "remote_group": ("security_group", "remote_group_id"),
    },
    "trunk": {"port": ("port", "port_id")},
}


def _find(plugin, kind, value):
    return client.find_live_id(plugin, "network", kind, value)


def neutron_state(plugin):
    """{property: live value} of the plugin's Neutron resource.

    :raises base.ResourceGone: Neutron answers 404.
    :raises NotImplementedError: an entity whose drift is not covered.
    """
    entity = plugin.entity
    if entity not in COVERED:
        raise NotImplementedError
    plugin._live = None
    try:
        live = plugin._fetch()
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    props = plugin.properties
    state = {k: live[k] for k in COVERED[entity] if k in live}
    for prop, (kind, field) in REFERENCES.get(entity, {}).items():
        if props.get(prop) is not None and field in live:
            state[prop] = (
                props[prop]
                if client.same_ref(
                    plugin, "network", kind, props[prop], live[field]
                )
                else live[field]
            )
    if "tags" in live:
        state["tags"] = _as_set(props.get("tags"), live["tags"])
    if entity == "port" and props.get("security_groups") is not None:
        state["security_groups"] = _security_groups(plugin, live)
    if entity == "router" and "external_gateway_info" in live:
        state["external_gateway_info"] = _gateway(plugin, live)
    if entity == "security_group":
        state["rules"] = _rules(plugin, live)
    if entity == "trunk" and props.get("sub_ports") is not None:
        state["sub_ports"] = _sub_ports(plugin, live)
    return state


def _as_set(stored, live):
    """The stored list when it holds the same items, else Neutron's."""
    if stored is not None and sorted(map(str, stored)) == sorted(
        map(str, live or ())
    ):
        return stored
    return list(live or ())


def _security_groups(plugin, live):
    stored = plugin.properties["security_groups"]
    ids = sorted(_find(plugin, "security_group", sg) or sg for sg in stored)
    return (
        stored
        if ids == sorted(live["security_groups"])
        else sorted(live["security_groups"])
    )


def _gateway(plugin, live):
    stored = plugin.properties.get("external_gateway_info")
    gateway = live["external_gateway_info"] or {}
    if not gateway:
        return None
    if (
        stored
        and client.same_ref(
            plugin,
            "network",
            "network",
            stored["network"],
            gateway.get("network_id"),
        )
        and stored.get("enable_snat") in (None, gateway.get("enable_snat"))
    ):
        return stored
    return {
        "network": gateway.get("network_id"),
        "enable_snat": gateway.get("enable_snat"),
    }


def _rules(plugin, live):
    """The stored rules when Neutron has exactly them (keyed as the
    plugin keys them), else Neutron's rules in the property's form."""
    from heat_lite.resources.openstack import neutron_security_group as sg

    stored = plugin.properties.get("rules") or []
    egress = any(r.get("direction") == "egress" for r in stored)
    wanted = list(stored) if egress else list(stored) + sg.DEFAULT_EGRESS
    desired = sorted(plugin._key(plugin._rule(r)) for r in wanted)
    current = live.get("security_group_rules") or []
    if sorted(plugin._key(r) for r in current) == desired:
        return stored
    defaults = {plugin._key(plugin._rule(r)) for r in sg.DEFAULT_EGRESS}
    return [
        _rule_property(r)
        for r in current
        if egress or plugin._key(r) not in defaults
    ]


def _rule_property(rule):
    """A Neutron rule in the ``rules`` property's form."""
    found = {
        k: rule.get(k)
        for k in (
            "direction",
            "ethertype",
            "protocol",
            "port_range_min",
            "port_range_max",
            "remote_ip_prefix",
            "remote_group_id",
        )
        if rule.get(k) is not None
    }
    found["remote_mode"] = (
        "remote_group_id"
        if rule.get("remote_group_id")
        else "remote_ip_prefix"
    )
    return found


def _sub_ports(plugin, live):
    """The stored subports when the trunk has exactly them, else the
    trunk's in the property's form (ports by ID)."""
    stored = plugin.properties["sub_ports"] or []
    have = sorted(
        (sp["port_id"], sp["segmentation_type"], sp["segmentation_id"])
        for sp in live.get("sub_ports") or ()
    )
    ids = {key[0] for key in have}
    wanted = sorted(
        (
            sp["port"]
            if sp["port"] in ids
            else plugin._port_id(sp["port"], must_exist=False),
            sp["segmentation_type"],
            sp["segmentation_id"],
        )
        for sp in stored
    )
    if wanted == have:
        return stored
    return [
        {"port": port, "segmentation_type": kind, "segmentation_id": seg}
        for port, kind, seg in have
    ]


def router_interface_state(plugin):
    """{} while the router still has the interface.

    :raises base.ResourceGone: it has not (or the router is gone).
    """
    router_id, _, rest = plugin.resource_id.partition(":")
    key, _, value = rest.partition("=")
    ports = client.connection(plugin).network.ports(device_id=router_id)
    for port in ports:
        if key == "port_id" and port.id == value:
            return {}
        if key == "subnet_id" and any(
            ip.get("subnet_id") == value for ip in port.fixed_ips or ()
        ):
            return {}
    raise base.ResourceGone()


def extra_routes_state(plugin):
    """{routes: the set's routes the router still has}.

    :raises base.ResourceGone: the router is gone.
    """
    network = client.connection(plugin).network
    try:
        router = network.get_router(plugin.resource_id)
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    have = {(r["destination"], r["nexthop"]) for r in router.routes or ()}
    stored = plugin.properties.get("routes") or []
    return {
        "routes": [
            r for r in stored if (r["destination"], r["nexthop"]) in have
        ]
    }
