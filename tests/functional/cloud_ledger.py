"""After each cloud test: the stacks it left are deleted, and the cloud is
checked with openstacksdk.

``around(...)`` is the body of the ``cloud_ledger`` fixture (conftest.py).
Before the test it notes what the ``demo`` project has; after it, while
the stacks still stand, every cloud resource heat_lite lists as existing
(a COMPLETE record of an OpenStack type with a physical ID) must exist in
the cloud; then every stack of the heat_lite deployments given is
deleted (a test that failed half-way leaves them), and nothing made in
the project since the test began may be left. Leftovers are removed so
that the next test starts clean, and reported as a failure.
"""

from openstack import exceptions as sdk_exc

from harness import helpers, polling

# What is noted, in the order leftovers are deleted: kind -> (service,
# list method, listed by project?, delete method).
_KINDS = {
    "server": ("compute", "servers", False, "delete_server"),
    # Before its ports: Neutron keeps a trunk's ports while it stands.
    "trunk": ("network", "trunks", True, "delete_trunk"),
    "port": ("network", "ports", True, "delete_port"),
    "floating_ip": ("network", "ips", True, "delete_ip"),
    "router": ("network", "routers", True, None),
    "subnet": ("network", "subnets", True, "delete_subnet"),
    "network": ("network", "networks", True, "delete_network"),
    "security_group": (
        "network",
        "security_groups",
        True,
        "delete_security_group",
    ),
    "keypair": ("compute", "keypairs", False, "delete_keypair"),
    "server_group": ("compute", "server_groups", False, "delete_server_group"),
    "image": ("image", "images", True, "delete_image"),
}


def _ids(conn, kind):
    service, lister, by_project, _ = _KINDS[kind]
    query = {}
    if by_project:
        key = "owner" if kind == "image" else "project_id"
        query[key] = conn.current_project_id
    items = getattr(getattr(conn, service), lister)(**query)
    if kind == "trunk":
        try:
            return {item.id for item in items}
        except sdk_exc.NotFoundException:
            return set()  # a cloud started before it had trunks
    if kind == "keypair":
        return {k.name for k in items}
    if kind == "security_group":
        return {g.id for g in items if g.name != "default"}
    return {item.id for item in items}


def _delete(conn, kind, item):
    service, _, _, deleter = _KINDS[kind]
    if deleter is None:
        return _delete_router(conn, item)
    return getattr(getattr(conn, service), deleter)(item, ignore_missing=True)


# Resource type: how to look its physical ID up (None when gone).
FINDERS = {
    "OS::Nova::Server": lambda c, i: c.compute.find_server(i),
    "OS::Nova::KeyPair": lambda c, i: c.compute.find_keypair(i),
    "OS::Nova::ServerGroup": lambda c, i: c.compute.find_server_group(i),
    "OS::Neutron::Net": lambda c, i: c.network.find_network(i),
    "OS::Neutron::Subnet": lambda c, i: c.network.find_subnet(i),
    "OS::Neutron::Port": lambda c, i: c.network.find_port(i),
    "OS::Neutron::Router": lambda c, i: c.network.find_router(i),
    "OS::Neutron::SecurityGroup": lambda c, i: c.network.find_security_group(
        i
    ),
    "OS::Neutron::FloatingIP": lambda c, i: c.network.get_ip(i),
    "OS::Neutron::Trunk": lambda c, i: c.network.find_trunk(i),
    "OS::Glance::WebImage": lambda c, i: c.image.find_image(i),
}


def _delete_router(conn, router_id):
    for port in conn.network.ports(
        device_id=router_id, device_owner="network:router_interface"
    ):
        conn.network.remove_interface_from_router(router_id, port_id=port.id)
    conn.network.delete_router(router_id, ignore_missing=True)


def snapshot(conn):
    return {kind: _ids(conn, kind) for kind in _KINDS}


def missing(heat, conn):
    """[(stack, resource, type, physical ID)] that heat_lite lists as made
    but the cloud does not have."""
    gone = []
    for stack in heat.stacks.list():
        for res in heat.resources.list(stack.id, nested_depth=3):
            find = FINDERS.get(res.resource_type)
            if (
                find is None
                or not res.physical_resource_id
                or res.resource_status != "COMPLETE"
                or res.resource_action in ("DELETE", "INIT")
            ):
                continue
            try:
                found = find(conn, res.physical_resource_id)
            except Exception:  # noqa: BLE001 - any failure to find it
                found = None
            if found is None:
                gone.append(
                    (
                        stack.stack_name,
                        res.resource_name,
                        res.resource_type,
                        res.physical_resource_id,
                    )
                )
    return gone


def delete_stacks(heat, timeout=180):
    """Delete every stack of ``heat`` and wait until they are gone."""
    stacks = list(heat.stacks.list())
    for stack in stacks:
        heat.stacks.delete(stack.id)
    for stack in stacks:
        helpers.wait_for_status(heat, stack.id, "DELETE_COMPLETE", timeout)


def _left(conn, before, timeout):
    """{kind: ids} made since ``before`` and still there after waiting
    ``timeout`` s (server deletes end a moment after the stack's)."""
    seen = {}

    def gone():
        now = snapshot(conn)
        seen["left"] = {
            k: now[k] - before[k] for k in now if now[k] - before[k]
        }
        return not seen["left"]

    polling.awhile(gone, timeout, 0.5)
    return seen["left"]


def clean(conn, left):
    """Delete what ``left`` names, in dependency order."""
    for kind in _KINDS:
        for item in left.get(kind, ()):
            try:
                _delete(conn, kind, item)
            except Exception:  # noqa: BLE001 - best effort, reported anyway
                pass
        if kind == "server":
            servers = left.get(kind, ())
            polling.awhile(
                lambda ids=servers: (
                    not any(conn.compute.find_server(i) for i in ids)
                ),
                60,
                0.5,
            )


def around(conn, heats, others=()):
    """The fixture's body: yield, then check and clean (see the module).
    ``others``: deployments acting as another project, whose stacks are
    only deleted."""
    before = snapshot(conn)
    yield
    problems = []
    for heat in heats:
        problems.extend("missing: %s" % (m,) for m in missing(heat, conn))
    for heat in list(heats) + list(others):
        try:
            delete_stacks(heat)
        except AssertionError as exc:
            problems.append("stack not deleted: %s" % exc)
    left = _left(conn, before, timeout=30)
    if left:
        problems.append("left over after delete: %s" % left)
        clean(conn, left)
    assert not problems, "\n".join(problems)
