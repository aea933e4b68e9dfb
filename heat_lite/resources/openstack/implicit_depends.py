"""Dependencies Heat adds without the template saying so.

A server, or a port, on a network must wait for the subnets of that
network in the same stack: Neutron gives a port its address from a subnet
that exists when the port is made, so a server booted before its
network's subnet comes up without an address (or fails). Heat adds these
edges in ``add_dependencies`` of its Server and Port; heat_lite's types
declare them with ``implicit_depends`` (see ``resources.base``), read from
the parsed properties before anything is resolved:

* a server depends on every subnet whose ``network`` is one of its
  ``networks`` entries' networks -- and on every subnet when an entry
  names no network (a port, ``allocate_network``) or a subnet's network
  is not known, to be safe;
* a port depends on every subnet of its own network;
* a router depends on every subnet of its gateway's network;
* a floating IP depends on the routers whose gateway is on its
  ``floating_network``, and on the router interfaces of the subnet its
  ``port_id``'s port (a port of this stack) is on -- without a router on
  that subnet its address is unreachable, and Neutron refuses to
  associate it;
* a floating IP association depends on the router interfaces of its
  port's subnet, as a floating IP with a ``port_id`` does;
* an extra route set depends on the router interfaces of its router (a
  next hop must be on a subnet the router is connected to).

Two references are "the same network" when both are ``get_resource`` of
the same resource, or the same literal name or ID (``get_param`` is
resolved first). Anything else is not known.
"""

from heat_lite.engine.template import fn_data

UNKNOWN = None


def network_key(value, param):
    """What a network reference names, comparable with ``==``, or
    UNKNOWN. ``param(name)`` gives a parameter's value."""
    if isinstance(value, str) and value:
        return ("id-or-name", value)
    if isinstance(value, fn_data.GetResource):
        return ("resource", value.args)
    if isinstance(value, fn_data.GetParam) and isinstance(value.args, str):
        try:
            resolved = param(value.args)
        except Exception:  # noqa: BLE001 - an unknown parameter: unknown
            return UNKNOWN
        return network_key(resolved, param)
    return UNKNOWN


def _of_kind(others, module, kind):
    """{name: properties} of the other resources whose plugin class is
    ``kind`` of ``heat_lite.resources.openstack.<module>`` (imported late:
    those modules import this one)."""
    import importlib

    cls_wanted = getattr(
        importlib.import_module("heat_lite.resources.openstack." + module),
        kind,
    )
    return {
        name: defn.properties or {}
        for name, (cls, defn) in others.items()
        if cls is not None and issubclass(cls, cls_wanted)
    }


def _either(props, *keys):
    for key in keys:
        if props.get(key):
            return props[key]
    return None


def _subnets(others, param):
    """{subnet resource name: network key} of the stack's subnets."""
    return {
        name: network_key(_either(props, "network", "network_id"), param)
        for name, props in _of_kind(others, "neutron_subnet", "Subnet").items()
    }


def server(defn, others, param):
    """The subnets a server defined by ``defn`` waits for."""
    nets = (defn.properties or {}).get("networks")
    if not isinstance(nets, list) or not nets:
        return set()
    keys = []
    for net in nets:
        ref = (
            net.get("network") or net.get("uuid")
            if isinstance(net, dict)
            else None
        )
        keys.append(network_key(ref, param))
    subnets = _subnets(others, param)
    if UNKNOWN in keys:
        return set(subnets)
    return {
        name for name, key in subnets.items() if key is UNKNOWN or key in keys
    }


def port(defn, others, param):
    """The subnets a port defined by ``defn`` waits for."""
    props = defn.properties or {}
    key = network_key(props.get("network") or props.get("network_id"), param)
    if key is UNKNOWN:
        return set()
    return {
        name
        for name, subnet_key in _subnets(others, param).items()
        if subnet_key == key
    }


def router(defn, others, param):
    """The subnets of the router's gateway network it waits for."""
    gateway = (defn.properties or {}).get("external_gateway_info")
    if not isinstance(gateway, dict):
        return set()
    key = network_key(gateway.get("network"), param)
    if key is UNKNOWN:
        return set()
    return {
        name
        for name, subnet_key in _subnets(others, param).items()
        if subnet_key == key
    }


def _port_subnets(port_props, others, param):
    """Keys of the subnets a port is on, as far as its definition says;
    UNKNOWN among them when it may be on a subnet not named."""
    fixed = port_props.get("fixed_ips")
    if isinstance(fixed, list) and fixed:
        return {
            network_key(_either(ip, "subnet", "subnet_id"), param)
            if isinstance(ip, dict)
            else UNKNOWN
            for ip in fixed
        }
    # No fixed IPs: any subnet of its network.
    net = network_key(_either(port_props, "network", "network_id"), param)
    on_net = {
        ("resource", name)
        for name, key in _subnets(others, param).items()
        if key == net and net is not UNKNOWN
    }
    return on_net | {UNKNOWN}


def floating_ip(defn, others, param):
    """The routers and router interfaces a floating IP waits for."""
    props = defn.properties or {}
    found = set()
    floating = network_key(
        _either(props, "floating_network", "floating_network_id"), param
    )
    for name, router_props in _of_kind(
        others, "neutron_router", "Router"
    ).items():
        gateway = router_props.get("external_gateway_info")
        if isinstance(gateway, dict) and floating is not UNKNOWN:
            if network_key(gateway.get("network"), param) == floating:
                found.add(name)
    return found | _interfaces_of_port(props.get("port_id"), others, param)


def floating_ip_association(defn, others, param):
    """The router interfaces an association waits for (those of its
    port's subnet: Neutron refuses a floating IP for a port it cannot
    reach)."""
    props = defn.properties or {}
    return _interfaces_of_port(props.get("port_id"), others, param)


def _interfaces_of_port(port, others, param):
    """The router interfaces on the subnets of ``port`` (a reference to
    a port of this stack; nothing for anything else)."""
    if not isinstance(port, fn_data.GetResource) or port.args not in others:
        return set()
    port_subnets = _port_subnets(
        others[port.args][1].properties or {}, others, param
    )
    found = set()
    for name, iface in _of_kind(
        others, "neutron_router", "RouterInterface"
    ).items():
        subnet = network_key(_either(iface, "subnet", "subnet_id"), param)
        if (
            subnet is UNKNOWN
            or subnet in port_subnets
            or (UNKNOWN in port_subnets and subnet[0] != "resource")
        ):
            found.add(name)
    return found


def extra_route_set(defn, others, param):
    """The interfaces of its router an extra route set waits for (its
    next hops are on their subnets)."""
    key = network_key((defn.properties or {}).get("router"), param)
    if key is UNKNOWN:
        return set()
    return {
        name
        for name, iface in _of_kind(
            others, "neutron_router", "RouterInterface"
        ).items()
        if network_key(_either(iface, "router", "router_id"), param) == key
    }
