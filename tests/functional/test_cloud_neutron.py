"""The Neutron types and the custom constraints against the test cloud.
heat-lite-all (noauth) acts in the cloud as its non-admin ``demo`` user
(``[openstack] cloud = minicloud-demo``), or as ``admin`` for admin-only
types (fixtures in conftest.py). Every check of the cloud's side goes
through openstacksdk: what the stack says exists must exist, and nothing
may be left after a delete.
"""

import pytest

from harness import cloud as cloud_mod
from harness import helpers, polling

# The first test also waits for the cloud: its venv install and start.
pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    # Stacks deleted and the cloud checked after each test.
    pytest.mark.usefixtures("cloud_ledger_demo"),
]


def _rules(cloud_sdk, sg_id):
    return sorted(
        (r.direction, r.protocol, r.port_range_min)
        for r in cloud_sdk.network.security_group_rules(
            security_group_id=sg_id
        )
    )


def test_security_group_rules_and_a_server_in_it(
    cloud, heat_on_cloud, cloud_sdk
):
    def tmpl(ports):
        rules = [
            {"protocol": "tcp", "port_range_min": port, "port_range_max": port}
            for port in ports
        ]
        return helpers.template(
            {
                "sg": {
                    "type": "OS::Neutron::SecurityGroup",
                    "properties": {"description": "web", "rules": rules},
                },
                "server": {
                    "type": "OS::Nova::Server",
                    "properties": {
                        "image": cloud.image,
                        "flavor": cloud.flavor,
                        "security_groups": [{"get_resource": "sg"}],
                        "networks": [{"network": cloud.network}],
                    },
                },
            }
        )

    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(stack_name="guarded", template=tmpl([22]))[
        "stack"
    ]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    egress = [("egress", None, None)] * 2
    assert _rules(cloud_sdk, ids["sg"]) == egress + [("ingress", "tcp", 22)]
    (port,) = cloud_sdk.network.ports(device_id=ids["server"])
    assert port.security_group_ids == [ids["sg"]]

    heat.stacks.update(stack_id, template=tmpl([22, 80]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id) == ids
    assert _rules(cloud_sdk, ids["sg"]) == egress + [
        ("ingress", "tcp", 22),
        ("ingress", "tcp", 80),
    ]

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.network.find_security_group(ids["sg"]) is None


def test_router_interface_and_floating_ip(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": "10.79.0.0/24",
                },
            },
            "router": {
                "type": "OS::Neutron::Router",
                "properties": {"external_gateway_info": {"network": "public"}},
            },
            "iface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": {"get_resource": "subnet"},
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {
                    "network": {"get_resource": "net"},
                    "fixed_ips": [{"subnet": {"get_resource": "subnet"}}],
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "networks": [{"port": {"get_resource": "port"}}],
                },
            },
            "fip": {
                "type": "OS::Neutron::FloatingIP",
                "depends_on": "iface",
                "properties": {
                    "floating_network": "public",
                    "port_id": {"get_resource": "port"},
                },
            },
        },
        outputs={
            "fip": {"value": {"get_attr": ["fip", "floating_ip_address"]}}
        },
    )
    stack_id = heat.stacks.create(stack_name="routed", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    public = cloud_sdk.network.find_network("public")
    router = cloud_sdk.network.get_router(ids["router"])
    assert router.external_gateway_info["network_id"] == public.id
    assert ids["iface"] == "%s:subnet_id=%s" % (ids["router"], ids["subnet"])
    (iface_port,) = cloud_sdk.network.ports(
        device_id=ids["router"], network_id=ids["net"]
    )
    assert iface_port.fixed_ips[0]["subnet_id"] == ids["subnet"]
    fip = cloud_sdk.network.get_ip(ids["fip"])
    assert fip.port_id == ids["port"]
    assert cloud_mod.outputs(heat, stack_id)["fip"] == fip.floating_ip_address
    assert fip.floating_ip_address.startswith("172.24.4.")

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.network.find_ip(ids["fip"]) is None
    assert cloud_sdk.network.find_router(ids["router"]) is None
    assert cloud_sdk.network.find_network(ids["net"]) is None


def test_check_finds_a_network_deleted_out_of_band(
    cloud, heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="checked",
        template=(helpers.template({"net": {"type": "OS::Neutron::Net"}})),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    net_id = cloud_mod.physical(heat, stack_id)["net"]
    cloud_sdk.network.delete_network(net_id)
    heat.actions.check(stack_id)
    with pytest.raises(AssertionError):
        helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE", timeout=120)
    res = heat.resources.get(stack_id, "net")
    assert res.resource_status == "CHECK_FAILED"
    assert res.resource_status_reason == (
        "NotFound: resources.net: The network (%s) could not be found."
        % net_id
    )
    heat.stacks.update(
        stack_id,
        template=helpers.template({"net": {"type": "OS::Neutron::Net"}}),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    new_id = cloud_mod.physical(heat, stack_id)["net"]
    assert new_id != net_id and cloud_sdk.network.get_network(new_id)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert cloud_sdk.network.find_network(new_id) is None


def test_network_delete_waits_out_a_port_in_use(
    cloud, heat_on_cloud, cloud_sdk
):
    """Neutron answers 409 while a port is on the network: the delete
    tries again (without a worker asleep) and ends once the port goes."""
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="busy",
        template=(helpers.template({"net": {"type": "OS::Neutron::Net"}})),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    net_id = cloud_mod.physical(heat, stack_id)["net"]
    stray = cloud_sdk.network.create_port(network_id=net_id)
    heat.stacks.delete(stack_id)
    polling.stays(
        lambda: heat.stacks.get(stack_id).stack_status == "DELETE_IN_PROGRESS",
        3,
        "the delete waiting for the stray port",
        0.3,
    )
    cloud_sdk.network.delete_port(stray)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert cloud_sdk.network.find_network(net_id) is None


def test_constraints_ask_the_cloud(cloud, heat_on_cloud):
    heat = heat_on_cloud.client()
    bad_flavor = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": "no-such-flavor",
                    "networks": [{"network": cloud.network}],
                },
            }
        }
    )
    error = helpers.http_error(
        lambda: heat.stacks.create(
            stack_name="bad-flavor", template=bad_flavor
        )
    )
    assert error.code == 400
    assert '"no-such-flavor" does not validate nova.flavor' in str(error)
    # The same from a plain string parameter (no constraint of its own):
    # the property's constraint checks what the parameter gives, at
    # create, as Heat does.
    flavor_param = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": {"get_param": "flavor"},
                    "networks": [{"network": cloud.network}],
                },
            }
        },
        parameters={"flavor": {"type": "string"}},
    )
    error = helpers.http_error(
        lambda: heat.stacks.create(
            stack_name="bad-flavor-param",
            template=flavor_param,
            parameters={"flavor": "no-such-flavor"},
        )
    )
    assert error.code == 400
    assert '"no-such-flavor" does not validate nova.flavor' in str(error)
    assert "resources.server.properties.flavor" in str(error)
    with_param = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": {"get_param": "image"},
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            }
        },
        parameters={
            "image": {
                "type": "string",
                "constraints": [{"custom_constraint": "glance.image"}],
            }
        },
    )
    # As Heat's validate (not strict): the values given are shown, not
    # checked (Horizon validates before the user typed anything); the
    # create is what refuses them.
    valid = heat.stacks.validate(
        template=with_param, parameters={"image": "no-such-image"}
    )
    assert "glance.image" in str(valid["Parameters"]["image"])
    error = helpers.http_error(
        lambda: heat.stacks.create(
            stack_name="bad-image-param",
            template=with_param,
            parameters={"image": "no-such-image"},
        )
    )
    assert error.code == 400
    assert "glance.image" in str(error)


def test_port_mac_in_place_and_subnet_lists_emptied(
    cloud, heat_as_admin, cloud_ledger_admin
):
    """As Heat: a port's mac_address changes in place (the same port,
    its fixed IP kept), and a subnet's allocation_pools / host_routes
    removed from the template are emptied in Neutron, not kept. As admin:
    Neutron's default policy lets only an admin change a MAC address (as
    the heat-tempest-plugin test does)."""
    heat = heat_as_admin.client(project="admin")
    cloud_sdk = cloud.connect("admin")

    def tmpl(mac, pools):
        subnet = {
            "network": {"get_resource": "net"},
            "cidr": "10.77.0.0/24",
        }
        if pools:
            subnet["allocation_pools"] = [
                {"start": "10.77.0.10", "end": "10.77.0.20"}
            ]
            subnet["host_routes"] = [
                {"destination": "10.78.0.0/24", "nexthop": "10.77.0.5"}
            ]
        return helpers.template(
            {
                "net": {"type": "OS::Neutron::Net"},
                "sub": {"type": "OS::Neutron::Subnet", "properties": subnet},
                "port": {
                    "type": "OS::Neutron::Port",
                    "properties": {
                        "network": {"get_resource": "net"},
                        "fixed_ips": [{"subnet": {"get_resource": "sub"}}],
                        "mac_address": mac,
                    },
                },
            }
        )

    stack_id = heat.stacks.create(
        stack_name="macpools", template=tmpl("fa:16:3e:00:00:01", True)
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    port = cloud_sdk.network.get_port(ids["port"])
    subnet = cloud_sdk.network.get_subnet(ids["sub"])
    assert subnet.allocation_pools == [
        {"start": "10.77.0.10", "end": "10.77.0.20"}
    ]
    assert subnet.host_routes
    heat.stacks.update(stack_id, template=tmpl("fa:16:3e:00:00:02", False))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    after = cloud_mod.physical(heat, stack_id)
    assert after["port"] == ids["port"] and after["sub"] == ids["sub"]
    moved = cloud_sdk.network.get_port(ids["port"])
    assert moved.mac_address == "fa:16:3e:00:00:02"
    assert moved.fixed_ips == port.fixed_ips
    emptied = cloud_sdk.network.get_subnet(ids["sub"])
    assert emptied.allocation_pools == []
    assert emptied.host_routes == []
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)


def _assoc_and_rules(port, rule_port):
    """A floating IP associated by an OS::Neutron::FloatingIPAssociation
    (no depends_on: it waits for the router interface by itself), and a
    group whose rules are OS::Neutron::SecurityGroupRule resources."""
    ports = {
        name: {
            "type": "OS::Neutron::Port",
            "properties": {
                "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}],
            },
        }
        for name in ("port_a", "port_b")
    }
    return helpers.template(
        dict(
            ports,
            net={"type": "OS::Neutron::Net"},
            subnet={
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": "10.81.0.0/24",
                },
            },
            router={
                "type": "OS::Neutron::Router",
                "properties": {"external_gateway_info": {"network": "public"}},
            },
            iface={
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": {"get_resource": "subnet"},
                },
            },
            fip={
                "type": "OS::Neutron::FloatingIP",
                "depends_on": "iface",
                "properties": {"floating_network": "public"},
            },
            assoc={
                "type": "OS::Neutron::FloatingIPAssociation",
                "properties": {
                    "floatingip_id": {"get_resource": "fip"},
                    "port_id": {"get_resource": port},
                },
            },
            sg={"type": "OS::Neutron::SecurityGroup"},
            ssh={
                "type": "OS::Neutron::SecurityGroupRule",
                "properties": {
                    "security_group": {"get_resource": "sg"},
                    "port_range_min": rule_port,
                    "port_range_max": rule_port,
                    "remote_ip_prefix": "10.0.0.0/8",
                },
            },
            ping={
                "type": "OS::Neutron::SecurityGroupRule",
                "properties": {
                    "security_group": {"get_resource": "sg"},
                    "protocol": "icmp",
                    "remote_group": {"get_resource": "sg"},
                },
            },
        )
    )


def test_floating_ip_association_and_security_group_rules(
    heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="associated", template=_assoc_and_rules("port_a", 22)
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    assert ids["assoc"] == "%s:%s" % (ids["fip"], ids["port_a"])
    assert cloud_sdk.network.get_ip(ids["fip"]).port_id == ids["port_a"]
    ssh = cloud_sdk.network.get_security_group_rule(ids["ssh"])
    assert (ssh.security_group_id, ssh.direction, ssh.protocol) == (
        ids["sg"],
        "ingress",
        "tcp",  # the type's default protocol
    )
    assert (ssh.port_range_min, ssh.remote_ip_prefix) == (22, "10.0.0.0/8")
    ping = cloud_sdk.network.get_security_group_rule(ids["ping"])
    assert (ping.protocol, ping.remote_group_id) == ("icmp", ids["sg"])

    # The association moves in place; a changed rule is a new rule.
    heat.stacks.update(stack_id, template=_assoc_and_rules("port_b", 2222))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    after = cloud_mod.physical(heat, stack_id)
    assert after["fip"] == ids["fip"]
    assert after["assoc"] == "%s:%s" % (ids["fip"], ids["port_b"])
    assert cloud_sdk.network.get_ip(ids["fip"]).port_id == ids["port_b"]
    assert after["ssh"] != ids["ssh"] and after["ping"] == ids["ping"]
    assert cloud_sdk.network.find_security_group_rule(ids["ssh"]) is None
    rule = cloud_sdk.network.get_security_group_rule(after["ssh"])
    assert rule.port_range_min == 2222

    # Deleting the association alone leaves the floating IP, unassociated.
    template = _assoc_and_rules("port_b", 2222)
    del template["resources"]["assoc"]
    heat.stacks.update(stack_id, template=template)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_sdk.network.get_ip(ids["fip"]).port_id is None

    # A rule with both a remote group and a prefix is refused.
    both = helpers.template(
        {
            "sg": {"type": "OS::Neutron::SecurityGroup"},
            "rule": {
                "type": "OS::Neutron::SecurityGroupRule",
                "properties": {
                    "security_group": {"get_resource": "sg"},
                    "remote_group": {"get_resource": "sg"},
                    "remote_ip_prefix": "10.0.0.0/8",
                },
            },
        }
    )
    error = helpers.http_error(
        lambda: heat.stacks.create(stack_name="both", template=both)
    )
    assert error.code == 400
    assert "remote_group, remote_ip_prefix" in str(error)
