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
* a port depends on every subnet of its own network.

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


def _subnets(others, param):
    """{subnet resource name: network key} of the stack's subnets."""
    from heat_lite.resources.openstack import neutron_subnet

    found = {}
    for name, (cls, defn) in others.items():
        if cls is not None and issubclass(cls, neutron_subnet.Subnet):
            props = defn.properties or {}
            net = props.get("network") or props.get("network_id")
            found[name] = network_key(net, param)
    return found


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
