"""The live state of an ``OS::Nova::Server`` for drift detection
(``Resource.live_state``; ``engine.drift`` compares it).

Read with one GET of the server. Values come back in the form the
record stores them: a ``flavor`` or ``image`` the template named by
name is returned by that name while the server still has it (names and
IDs resolved through ``client.find_id``, cached 30 s), ``metadata`` as
the template's map while Nova holds its serialized form. ``status`` is
observed beyond the properties: ACTIVE is expected (SUSPENDED after a
stack suspend).
"""

from heat_lite.common.states import Action
from heat_lite.resources import base
from heat_lite.resources.openstack import client, server_networks
from heat_lite.resources.openstack import server_nets_match as nets_match

sdk_exc = client.sdk_exc


def _serialized(metadata):
    # Nova keeps strings only (nova.serialize_metadata sent them so).
    from heat_lite.resources.openstack import nova

    return nova.serialize_metadata(metadata)


def server_state(plugin):
    """{name, flavor, image, metadata, status} of the plugin's server.

    :raises base.ResourceGone: the server is gone (or DELETED).
    """
    conn = client.connection(plugin)
    try:
        server = conn.compute.get_server(plugin.resource_id)
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    if server.status in ("DELETED", "SOFT_DELETED"):
        raise base.ResourceGone()
    props = plugin.properties
    live = {"name": server.name, "status": server.status}
    live["metadata"] = _metadata(props.get("metadata") or {}, server)
    if props.get("flavor") and server.flavor is not None:
        live["flavor"] = _flavor(conn, props["flavor"], server.flavor)
    if props.get("image") and server.image is not None and server.image.id:
        live["image"] = _image(conn, props["image"], server.image.id)
    networks = props.get("networks")
    if networks and not any(n.get("allocate_network") for n in networks):
        live["networks"] = _networks(conn, plugin.resource_id, networks)
    return live


def server_expectations(action):
    """What ``status`` should be after the record's last ``action``."""
    return {"status": "SUSPENDED" if action == Action.SUSPEND else "ACTIVE"}


def _metadata(stored, server):
    live = dict(server.metadata or {})
    return stored if _serialized(stored) == live else live


def _flavor(conn, stored, flavor):
    """The stored flavor reference if the server has that flavor, else
    the flavor's name (or ID) as Nova shows it."""
    shown = [v for v in (flavor.original_name, flavor.name, flavor.id) if v]
    if stored in shown:
        return stored
    wanted = client.find_id(
        conn, "compute", "find_flavor", stored, ignore_missing=True
    )
    for value in shown:
        if wanted is not None and wanted == client.find_id(
            conn, "compute", "find_flavor", value, ignore_missing=True
        ):
            return stored
    return shown[0] if shown else None


def _image(conn, stored, image_id):
    """The stored image reference if the server runs that image, else
    the image's ID."""
    if stored == image_id:
        return stored
    wanted = client.find_id(
        conn, "image", "find_image", stored, ignore_missing=True
    )
    return stored if wanted == image_id else image_id


def _networks(conn, server_id, stored):
    """The stored entries when the server's interfaces are exactly
    theirs, else the paired entries and the other interfaces."""
    entries = [
        server_networks.resolve(conn, net, strict=False) for net in stored
    ]
    ifaces = [
        nets_match.interface_facts(i)
        for i in conn.compute.server_interfaces(server_id)
    ]
    paired = nets_match.pair(entries, ifaces)
    if None not in paired and len(ifaces) == len(stored):
        return stored
    taken = set(paired)
    kept = [n for n, j in zip(stored, paired, strict=True) if j is not None]
    return kept + [
        {k: iface[k] for k in ("network", "port", "fixed_ip")}
        for j, iface in enumerate(ifaces)
        if j not in taken
    ]


def _get(getter, ident):
    try:
        return getter(ident)
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None


def keypair_state(plugin):
    """{name, public_key, type} of a key pair."""
    compute = client.connection(plugin).compute
    found = compute.find_keypair(
        plugin.resource_id, user_id=plugin.properties.get("user")
    )
    if found is None:
        raise base.ResourceGone()
    return {
        "name": found.name,
        "public_key": found.public_key,
        "type": found.type,
    }


def server_group_state(plugin):
    """{name, policies, rules} of a server group."""
    compute = client.connection(plugin).compute
    group = _get(compute.get_server_group, plugin.resource_id)
    policies = list(group.policies or ([group.policy] if group.policy else []))
    stored = plugin.properties.get("rules") or {}
    rules = {
        k: stored[k] if str(stored.get(k)) == str(v) else v
        for k, v in (group.rules or {}).items()
    }
    return {"name": group.name, "policies": policies, "rules": rules}


FLAVOR_FIELDS = ("name", "ram", "vcpus", "disk", "ephemeral", "rxtx_factor")


def flavor_state(plugin):
    """The flavor's fields, ``extra_specs`` and ``tenants``."""
    compute = client.connection(plugin).compute
    flavor = _get(compute.get_flavor, plugin.resource_id)
    props = plugin.properties
    state = {k: getattr(flavor, k) for k in FLAVOR_FIELDS}
    state["swap"] = flavor.swap or 0  # Nova shows no swap as ""
    state["is_public"] = flavor.is_public
    if props.get("extra_specs") is not None:
        live = compute.fetch_flavor_extra_specs(flavor.id).extra_specs or {}
        wanted = {k: str(v) for k, v in props["extra_specs"].items()}
        state["extra_specs"] = props["extra_specs"] if wanted == live else live
    if props.get("tenants") and not flavor.is_public:
        have = sorted(
            a["tenant_id"] for a in compute.get_flavor_access(flavor.id)
        )
        stored = props["tenants"]
        state["tenants"] = stored if sorted(stored) == have else have
    return state
