"""The ``networks`` property of OS::Nova::Server, against Neutron.

At create, an entry with a ``port`` boots on that port; an entry with a
``subnet`` boots on a port this plugin makes on the subnet's network,
with a fixed IP on that subnet (and ``fixed_ip`` if given) and the
server's ``security_groups`` (Heat's "internal port", named
``<server>-port-<n>``; the server records its ID in its data and deletes
it with the server); an entry with only a ``network`` (and ``fixed_ip``)
lets Nova make the port. A change between two explicit lists keeps the
port of every entry ``server_nets_match`` pairs with an old one and
detaches, then attaches, the rest (``interfaces_step``, carried out by
``server_update``).
"""

from heat_lite.common import exception
from heat_lite.resources.openstack import client
from heat_lite.resources.openstack import server_nets_match as nets_match
from heat_lite.resources.openstack.client import sdk_exc

INTERNAL = "internal_ports"


def _find(finder, name_or_id, strict):
    found = finder(name_or_id, ignore_missing=not strict)
    return found.id if found is not None else name_or_id


def resolve(conn, net, strict=True):
    """The facts of one entry, as IDs. ``strict`` False (an old entry,
    whose resources may be gone) keeps a name that no longer resolves."""
    facts = {"tag": net.get("tag"), "fixed_ip": net.get("fixed_ip")}
    if net.get("port"):
        facts["port"] = _find(conn.network.find_port, net["port"], strict)
    network = net.get("network") or net.get("uuid")
    if network:
        facts["network"] = (
            client.find_id(
                conn, "network", "find_network", network, not strict
            )
            or network
        )
    if net.get("subnet"):
        subnet = conn.network.find_subnet(
            net["subnet"], ignore_missing=not strict
        )
        facts["subnet"] = subnet.id if subnet else net["subnet"]
        if subnet is not None:
            _check_subnet(facts, subnet, given=bool(network), strict=strict)
    return facts


def _check_subnet(facts, subnet, given, strict):
    if not given:
        facts["network"] = subnet.network_id
    elif strict and facts["network"] != subnet.network_id:
        raise exception.StackValidationFailed(
            msg="Specified subnet %s does not belongs to network %s."
            % (subnet.id, facts["network"])
        )


def port_body(conn, facts, name, security_groups):
    """Neutron's create_port arguments for an internal port."""
    body = {"network_id": facts["network"], "name": name}
    fixed = {
        key: facts[fact]
        for key, fact in (("subnet_id", "subnet"), ("ip_address", "fixed_ip"))
        if facts.get(fact)
    }
    if fixed:
        body["fixed_ips"] = [fixed]
    if security_groups:
        body["security_groups"] = [
            conn.network.find_security_group(sg, ignore_missing=False).id
            for sg in security_groups
        ]
    return body


def _internal(facts):
    """True for an entry that needs an internal port."""
    return not facts.get("port") and bool(facts.get("subnet"))


def _nic(facts, port=None):
    """Nova's form of one entry (``port``: its internal port's ID)."""
    port = facts.get("port") or port
    if port:
        nic = {"port": port}
    else:
        nic = {"uuid": facts.get("network")}
        if facts.get("fixed_ip"):
            nic["fixed_ip"] = facts["fixed_ip"]
    if facts.get("tag"):
        nic["tag"] = facts["tag"]
    return nic


def _port_name(server, index):
    return "%s-port-%d" % (server, index)


def create_nics(conn, networks, server, security_groups, record):
    """Nova's ``networks`` request for the property, making the
    internal ports (``record(port_id)`` is called for each at once)."""
    if not networks:
        return "auto"
    if len(networks) == 1 and networks[0].get("allocate_network"):
        return networks[0]["allocate_network"]
    nics = []
    for i, net in enumerate(networks):
        facts = resolve(conn, net)
        port = None
        if _internal(facts):
            body = port_body(
                conn, facts, _port_name(server, i), security_groups
            )
            port = conn.network.create_port(**body).id
            record(port)
        nics.append(_nic(facts, port))
    return nics


def interfaces_step(conn, server_id, old_nets, new_nets, **port_args):
    """The step (see server_update) that moves the server from the
    entries ``old_nets`` to ``new_nets``, or None if no interface
    changes. ``port_args``: ``server`` (the name internal ports are
    named after), ``security_groups`` and ``internal`` (the IDs of the
    internal ports, deleted once detached). An internal port of a new
    entry is made by the step, after the detaches (it may take an
    address a detached port frees)."""
    old = [resolve(conn, net, strict=False) for net in old_nets]
    new = [resolve(conn, net) for net in new_nets]
    ifaces = [
        nets_match.interface_facts(i)
        for i in conn.compute.server_interfaces(server_id)
    ]
    _kept, detach, attach = nets_match.match(old, new, ifaces)
    if not detach and not attach:
        return None
    attach_nics = []
    for i in attach:
        nic = _nic(new[i])
        if _internal(new[i]):
            nic = {
                "create": port_body(
                    conn,
                    new[i],
                    _port_name(port_args["server"], i),
                    port_args.get("security_groups"),
                )
            }
        attach_nics.append(nic)
    internal = set(port_args.get("internal") or ())
    return {
        "kind": "interfaces",
        "detach": detach,
        "delete": [p for p in detach if p in internal],
        "attach": attach_nics,
        "made": [],
        "attached": [],
        "phase": "start",
    }


def delete_ports(conn, port_ids):
    """Delete internal ports; one already gone counts as deleted."""
    for port_id in port_ids:
        try:
            conn.network.delete_port(port_id, ignore_missing=True)
        except sdk_exc.NotFoundException:
            pass
