"""What a fresh test cloud offers its users: an image, a flavor, a network.

Made as admin: a public 4 KiB raw image (the fake virt driver never reads
it), small public flavors, a network shared with every project, with one
IPv4 subnet, so a non-admin project can boot servers on it, and an
external network ``public`` (flat, physical network ``public``) for
router gateways and floating IPs.
"""

from tools.minicloud import catalog

IMAGE = "mc-image"
FLAVOR = "mc-tiny"
FLAVOR_BIG = "mc-small"
NETWORK = "mc-net"
SUBNET = "mc-subnet"
CIDR = "10.10.0.0/24"
PUBLIC = "public"
PUBLIC_CIDR = "172.24.4.0/24"


def seed(layout):
    conn = catalog.connect(layout)
    image = conn.image.create_image(
        name=IMAGE,
        disk_format="raw",
        container_format="bare",
        visibility="public",
        data=b"\0" * 4096,
    )
    conn.compute.create_flavor(
        name=FLAVOR, ram=64, vcpus=1, disk=1, is_public=True
    )
    conn.compute.create_flavor(
        name=FLAVOR_BIG, ram=128, vcpus=1, disk=1, is_public=True
    )
    net = conn.network.create_network(name=NETWORK, shared=True)
    conn.network.create_subnet(
        name=SUBNET, network_id=net.id, ip_version=4, cidr=CIDR
    )
    public(conn)
    conn.close()
    return {"image": image.id, "network": net.id}


def public(conn):
    """The external network and its subnet (no DHCP: no agents)."""
    net = conn.network.create_network(
        name=PUBLIC,
        is_router_external=True,
        provider_network_type="flat",
        provider_physical_network=PUBLIC,
    )
    conn.network.create_subnet(
        name=PUBLIC + "-subnet",
        network_id=net.id,
        ip_version=4,
        cidr=PUBLIC_CIDR,
        is_dhcp_enabled=False,
    )
    return net
