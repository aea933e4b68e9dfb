"""OS::Nova::Server ``networks`` against the test cloud: entries with a
``subnet`` (the server's own internal port) and updates that keep or
swap interfaces as Heat does. The cloud ledger (conftest.py) checks
after each test that nothing is left, the internal ports included.
"""

import pytest

from harness import cloud as cloud_mod
from harness import helpers

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_demo"),
]


def _template(cloud, networks, subnets=("11.11.11",), extra=None):
    resources = {"net": {"type": "OS::Neutron::Net"}}
    for i, prefix in enumerate(subnets):
        resources["subnet%d" % i] = {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": "net"},
                "cidr": prefix + ".0/24",
                "allocation_pools": [
                    {"start": prefix + ".2", "end": prefix + ".9"}
                ],
            },
        }
    resources.update(extra or {})
    resources["server"] = {
        "type": "OS::Nova::Server",
        "depends_on": ["subnet%d" % i for i in range(len(subnets))],
        "properties": {
            "image": cloud.image,
            "flavor": cloud.flavor,
            "networks": networks,
        },
    }
    return helpers.template(
        resources,
        outputs={
            "addresses": {"value": {"get_attr": ["server", "addresses"]}},
            "networks": {"value": {"get_attr": ["server", "networks"]}},
        },
    )


NET = {"get_resource": "net"}
SUBNET = {"get_resource": "subnet0"}


def _ports(heat, stack_id, net_id):
    """[(port, address)] of the server on the stack's network, in
    Nova's order."""
    addresses = cloud_mod.outputs(heat, stack_id)["addresses"]
    return [(a["port"], a["addr"]) for a in addresses[net_id]]


def _update(heat, stack_id, template):
    heat.stacks.update(stack_id, template=template)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)


def _create(heat, name, template):
    stack_id = heat.stacks.create(stack_name=name, template=template)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    return stack_id


def test_subnet_entry_boots_on_an_own_port_with_ip_and_groups(
    cloud, heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    sg = {
        "sg": {
            "type": "OS::Neutron::SecurityGroup",
            "properties": {"name": "the_sg", "rules": [{"protocol": "icmp"}]},
        }
    }
    tmpl = _template(
        cloud, [{"subnet": SUBNET, "fixed_ip": "11.11.11.11"}], extra=sg
    )
    tmpl["resources"]["server"]["properties"]["security_groups"] = [
        {"get_resource": "sg"}
    ]
    stack_id = _create(heat, "subnetted", tmpl)
    ids = cloud_mod.physical(heat, stack_id)
    (port,) = cloud_sdk.network.ports(device_id=ids["server"])
    assert port.name == "server-port-0"
    assert port.fixed_ips == [
        {"subnet_id": ids["subnet0"], "ip_address": "11.11.11.11"}
    ]
    assert port.security_group_ids == [ids["sg"]]
    server = cloud_sdk.compute.get_server(ids["server"])
    assert server.security_groups == [{"name": "the_sg"}]
    networks = cloud_mod.outputs(heat, stack_id)["networks"]
    assert networks[ids["net"]] == ["11.11.11.11"]

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    # The server's own port goes with it.
    assert cloud_sdk.network.find_port(port.id) is None


def test_swaps_between_network_subnet_port_and_ip_keep_the_port(
    cloud, heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    stack_id = _create(heat, "swapper", _template(cloud, [{"network": NET}]))
    net_id = cloud_mod.physical(heat, stack_id)["net"]
    ((port0, ip0),) = _ports(heat, stack_id, net_id)
    for networks in (
        [{"subnet": SUBNET}],  # network -> subnet
        [{"network": NET}],  # subnet -> network
        [{"network": NET, "subnet": SUBNET}],  # add the subnet
        [{"network": NET, "fixed_ip": ip0}],  # add its own IP
        [{"port": port0}],  # network -> its own port
    ):
        _update(heat, stack_id, _template(cloud, networks))
        assert _ports(heat, stack_id, net_id) == [(port0, ip0)], networks


def test_another_subnet_replaces_the_servers_own_port(
    cloud, heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    subnets = ("11.11.11", "12.12.12")
    stack_id = _create(
        heat, "resubnet", _template(cloud, [{"subnet": SUBNET}], subnets)
    )
    net_id = cloud_mod.physical(heat, stack_id)["net"]
    ((old_port, old_ip),) = _ports(heat, stack_id, net_id)
    assert old_ip.startswith("11.11.11.")

    other = [{"subnet": {"get_resource": "subnet1"}}]
    _update(heat, stack_id, _template(cloud, other, subnets))
    ((port, ip),) = _ports(heat, stack_id, net_id)
    assert ip.startswith("12.12.12.") and port != old_port
    # Detached first, then deleted: it was the server's own.
    assert cloud_sdk.network.find_port(old_port) is None


def test_reordered_networks_keep_every_port(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    old = [
        {"network": NET},
        {"network": NET, "fixed_ip": "11.11.11.33"},
        {"subnet": SUBNET},
    ]
    new = [
        {"subnet": SUBNET},
        {"network": NET},
        {"network": NET, "subnet": SUBNET},
    ]
    tmpl = _template(cloud, old)
    # .33 is outside the allocation pool, so the pool has room for both.
    stack_id = _create(heat, "reorder", tmpl)
    net_id = cloud_mod.physical(heat, stack_id)["net"]
    before = _ports(heat, stack_id, net_id)
    assert len(before) == 3
    _update(heat, stack_id, _template(cloud, new))
    assert _ports(heat, stack_id, net_id) == before
