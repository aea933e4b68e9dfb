"""What a fresh test cloud offers its users: an image, a flavor, a network.

Made as admin: a public 4 KiB raw image (the fake virt driver never reads
it), a small public flavor, and a network shared with every project, with
one IPv4 subnet, so a non-admin project can boot servers on it.
"""

from tools.minicloud import catalog

IMAGE = "mc-image"
FLAVOR = "mc-tiny"
FLAVOR_BIG = "mc-small"
NETWORK = "mc-net"
SUBNET = "mc-subnet"
CIDR = "10.10.0.0/24"


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
    conn.close()
    return {"image": image.id, "network": net.id}
