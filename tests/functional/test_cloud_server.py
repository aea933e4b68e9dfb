"""OS::Neutron::Net, OS::Neutron::Subnet and OS::Nova::Server against the
test cloud.

heat-lite-all (noauth) acts in the cloud as its non-admin ``demo`` user
(``[openstack] cloud = minicloud-demo``). Every check of the cloud's side
goes through openstacksdk as that user: what the stack says exists must
exist, and nothing may be left after a delete.
"""

import base64
import email
import ipaddress
import time

import pytest

from tests.functional import cloud as cloud_mod
from tests.functional import deployment as deployment_mod
from tests.functional import helpers

# The first test also waits for the cloud: its venv install and start.
pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
]
CIDR = "10.77.0.0/24"


@pytest.fixture(scope="module")
def heat_on_cloud(cloud, tmp_path_factory):
    dep = deployment_mod.Deployment(
        "sqlite",
        tmp_path_factory.mktemp("heat-on-cloud"),
        extra_conf=cloud.heat_conf("demo"),
    )
    cloud.register_orchestration(dep.url)
    dep.start()
    try:
        yield dep
    finally:
        dep.stop()


@pytest.fixture(scope="module")
def heat_as_admin(cloud, tmp_path_factory):
    """A second heat_lite acting as the cloud's admin (for admin-only
    types); the catalog keeps pointing at the demo one."""
    dep = deployment_mod.Deployment(
        "sqlite",
        tmp_path_factory.mktemp("heat-as-admin"),
        extra_conf=cloud.heat_conf("admin"),
    )
    dep.start()
    try:
        yield dep
    finally:
        dep.stop()


@pytest.fixture(scope="module")
def sdk(cloud):
    conn = cloud.connect("demo")
    yield conn
    conn.close()


def _template(cloud, name, metadata):
    return helpers.template(
        {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": CIDR,
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "depends_on": "subnet",
                "properties": {
                    "name": name,
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "metadata": metadata,
                    "user_data_format": "RAW",
                    "user_data": "#!/bin/sh\necho hello\n",
                    "networks": [{"network": {"get_resource": "net"}}],
                },
            },
        },
        outputs={
            "ip": {"value": {"get_attr": ["server", "first_address"]}},
            "networks": {"value": {"get_attr": ["server", "networks"]}},
            "addresses": {"value": {"get_attr": ["server", "addresses"]}},
            "name": {"value": {"get_attr": ["server", "name"]}},
            "net_name": {"value": {"get_attr": ["net", "name"]}},
            "cidr": {"value": {"get_attr": ["subnet", "cidr"]}},
        },
    )


def _outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def test_net_subnet_server_lifecycle(cloud, heat_on_cloud, sdk):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="cloudy",
        template=_template(cloud, "web-1", {"role": "web", "n": 1}),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = _physical(heat, stack_id)
    server = sdk.compute.get_server(ids["server"])
    assert server.status == "ACTIVE"
    assert server.name == "web-1"
    assert server.metadata == {"role": "web", "n": "1"}
    assert sdk.network.get_network(ids["net"]).subnet_ids == [ids["subnet"]]
    outputs = _outputs(heat, stack_id)
    assert ipaddress.ip_address(outputs["ip"]) in ipaddress.ip_network(CIDR)
    assert outputs["networks"][outputs["net_name"]] == [outputs["ip"]]
    assert outputs["networks"][ids["net"]] == [outputs["ip"]]
    assert outputs["cidr"] == CIDR
    address = outputs["addresses"][outputs["net_name"]][0]
    assert address["addr"] == outputs["ip"]
    assert address["network"] == ids["net"]
    assert address["subnets"] == [{"id": ids["subnet"]}]
    (port,) = sdk.network.ports(device_id=ids["server"])
    assert address["port"] == port.id

    # In place: a new name and new metadata keep the same server.
    heat.stacks.update(
        stack_id, template=_template(cloud, "web-2", {"role": "db"})
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id) == ids
    server = sdk.compute.get_server(ids["server"])
    assert server.name == "web-2"
    assert server.metadata == {"role": "db"}
    assert _outputs(heat, stack_id)["name"] == "web-2"

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.network.find_network(ids["net"]) is None
    assert sdk.network.find_subnet(ids["subnet"]) is None
    assert not list(sdk.network.ports(network_id=ids["net"]))


def test_server_in_error_fails_with_nova_fault(cloud, heat_on_cloud, sdk):
    """No host can take the flavor: Nova's fault becomes the reason."""
    admin = cloud.connect("admin")
    flavor = admin.compute.find_flavor(
        "mc-huge"
    ) or admin.compute.create_flavor(
        name="mc-huge", ram=64, vcpus=1, disk=10**7, is_public=True
    )
    admin.close()
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="too-big",
        template=(
            helpers.template(
                {
                    "server": {
                        "type": "OS::Nova::Server",
                        "properties": {
                            "image": cloud.image,
                            "flavor": flavor.name,
                            "networks": [{"network": cloud.network}],
                        },
                    }
                }
            )
        ),
    )["stack"]["id"]
    with pytest.raises(AssertionError) as failed:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    assert "CREATE_FAILED" in str(failed.value)
    reason = heat.resources.get(stack_id, "server").resource_status_reason
    assert reason.startswith(
        "ResourceInError: resources.server: Went to "
        'status ERROR due to "Message: No valid host '
        "was found"
    ), reason
    server_id = _physical(heat, stack_id)["server"]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(server_id))


def test_server_without_networks_gets_the_project_network(
    cloud, heat_on_cloud, sdk
):
    """Heat fails this above microversion 2.36; Nova's ``auto`` picks
    the one network the project can use (the shared mc-net)."""
    visible = sorted(
        n.name for n in sdk.network.networks() if not n.is_router_external
    )
    assert visible == [cloud.network], (
        "auto needs exactly one network available to the project; a "
        "test left networks behind? %s" % visible
    )
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="no-nets",
        template=(
            helpers.template(
                {
                    "server": {
                        "type": "OS::Nova::Server",
                        "properties": {
                            "image": cloud.image,
                            "flavor": cloud.flavor,
                        },
                    }
                },
                outputs={
                    "ip": {"value": {"get_attr": ["server", "first_address"]}}
                },
            )
        ),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    server_id = _physical(heat, stack_id)["server"]
    assert list(sdk.compute.get_server(server_id).addresses) == [cloud.network]
    assert _outputs(heat, stack_id)["ip"].startswith("10.10.0.")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(server_id))


def _status(heat, stack_id, name):
    return heat.resources.get(stack_id, name)


def _wait_server(sdk, server_id, status, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sdk.compute.get_server(server_id).status == status:
            return
        time.sleep(0.3)
    raise AssertionError(
        "server %s not %s after %ss" % (server_id, status, timeout)
    )


def test_suspend_resume_check_and_replace_after_out_of_band_stop(
    cloud, heat_on_cloud, sdk
):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            }
        }
    )
    stack_id = heat.stacks.create(stack_name="lifecycle", template=tmpl)[
        "stack"
    ]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    server_id = _physical(heat, stack_id)["server"]

    heat.actions.suspend(stack_id)
    helpers.wait_for_status(heat, stack_id, "SUSPEND_COMPLETE", timeout=120)
    assert sdk.compute.get_server(server_id).status == "SUSPENDED"
    heat.actions.resume(stack_id)
    helpers.wait_for_status(heat, stack_id, "RESUME_COMPLETE", timeout=120)
    assert sdk.compute.get_server(server_id).status == "ACTIVE"
    heat.actions.check(stack_id)
    helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE", timeout=120)

    # Stopped behind heat_lite's back: the check says so ...
    sdk.compute.stop_server(server_id)
    _wait_server(sdk, server_id, "SHUTOFF")
    heat.actions.check(stack_id)
    with pytest.raises(AssertionError):
        helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE", timeout=120)
    res = _status(heat, stack_id, "server")
    assert res.resource_status == "CHECK_FAILED"
    assert res.resource_status_reason == (
        "Error: resources.server: 'status': expected 'ACTIVE', got 'SHUTOFF'"
    )
    # ... and the next update replaces it.
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    new_id = _physical(heat, stack_id)["server"]
    assert new_id != server_id
    assert sdk.compute.get_server(new_id).status == "ACTIVE"
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(server_id))

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(new_id))


def test_flavor_change_resizes_and_image_change_rebuilds(
    cloud, heat_on_cloud, sdk
):
    """Heat's default policies: RESIZE (confirmed) and REBUILD, in place;
    with REPLACE a new server replaces the old one."""
    admin = cloud.connect("admin")
    other = admin.image.find_image("mc-image-2") or admin.image.create_image(
        name="mc-image-2",
        disk_format="raw",
        container_format="bare",
        visibility="public",
        data=b"\1" * 4096,
    )
    admin.close()

    def tmpl(flavor, image, flavor_policy="RESIZE"):
        return helpers.template(
            {
                "server": {
                    "type": "OS::Nova::Server",
                    "properties": {
                        "image": image,
                        "flavor": flavor,
                        "flavor_update_policy": flavor_policy,
                        "networks": [{"network": cloud.network}],
                    },
                }
            }
        )

    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="resizer", template=tmpl(cloud.flavor, cloud.image)
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    server_id = _physical(heat, stack_id)["server"]

    heat.stacks.update(stack_id, template=tmpl("mc-small", cloud.image))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id)["server"] == server_id
    server = sdk.compute.get_server(server_id)
    assert (server.status, server.flavor.name) == ("ACTIVE", "mc-small")

    heat.stacks.update(stack_id, template=tmpl("mc-small", "mc-image-2"))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id)["server"] == server_id
    server = sdk.compute.get_server(server_id)
    assert (server.status, server.image.id) == ("ACTIVE", other.id)

    heat.stacks.update(
        stack_id,
        template=tmpl(cloud.flavor, "mc-image-2", flavor_policy="REPLACE"),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    new_id = _physical(heat, stack_id)["server"]
    assert new_id != server_id
    assert sdk.compute.get_server(new_id).flavor.name == cloud.flavor
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(server_id))

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(new_id))


def test_server_on_a_port_of_the_stack(cloud, heat_on_cloud, sdk):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": "10.78.0.0/24",
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {
                    "network": {"get_resource": "net"},
                    "fixed_ips": [
                        {
                            "subnet": {"get_resource": "subnet"},
                            "ip_address": "10.78.0.200",
                        }
                    ],
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
        },
        outputs={
            "ip": {"value": {"get_attr": ["server", "first_address"]}},
            "subnets": {"value": {"get_attr": ["port", "subnets"]}},
            "mac": {"value": {"get_attr": ["port", "mac_address"]}},
        },
    )
    stack_id = heat.stacks.create(stack_name="ported", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = _physical(heat, stack_id)
    port = sdk.network.get_port(ids["port"])
    assert port.device_id == ids["server"]
    assert port.fixed_ips == [
        {"subnet_id": ids["subnet"], "ip_address": "10.78.0.200"}
    ]
    outputs = _outputs(heat, stack_id)
    assert outputs["ip"] == "10.78.0.200"
    assert outputs["mac"] == port.mac_address
    assert [s["id"] for s in outputs["subnets"]] == [ids["subnet"]]

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.network.find_port(ids["port"]) is None
    assert sdk.network.find_network(ids["net"]) is None


def _rules(sdk, sg_id):
    return sorted(
        (r.direction, r.protocol, r.port_range_min)
        for r in sdk.network.security_group_rules(security_group_id=sg_id)
    )


def test_security_group_rules_and_a_server_in_it(cloud, heat_on_cloud, sdk):
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
    ids = _physical(heat, stack_id)
    egress = [("egress", None, None)] * 2
    assert _rules(sdk, ids["sg"]) == egress + [("ingress", "tcp", 22)]
    (port,) = sdk.network.ports(device_id=ids["server"])
    assert port.security_group_ids == [ids["sg"]]

    heat.stacks.update(stack_id, template=tmpl([22, 80]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id) == ids
    assert _rules(sdk, ids["sg"]) == egress + [
        ("ingress", "tcp", 22),
        ("ingress", "tcp", 80),
    ]

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.network.find_security_group(ids["sg"]) is None


def test_router_interface_and_floating_ip(cloud, heat_on_cloud, sdk):
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
    ids = _physical(heat, stack_id)
    public = sdk.network.find_network("public")
    router = sdk.network.get_router(ids["router"])
    assert router.external_gateway_info["network_id"] == public.id
    assert ids["iface"] == "%s:subnet_id=%s" % (ids["router"], ids["subnet"])
    (iface_port,) = sdk.network.ports(
        device_id=ids["router"], network_id=ids["net"]
    )
    assert iface_port.fixed_ips[0]["subnet_id"] == ids["subnet"]
    fip = sdk.network.get_ip(ids["fip"])
    assert fip.port_id == ids["port"]
    assert _outputs(heat, stack_id)["fip"] == fip.floating_ip_address
    assert fip.floating_ip_address.startswith("172.24.4.")

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.network.find_ip(ids["fip"]) is None
    assert sdk.network.find_router(ids["router"]) is None
    assert sdk.network.find_network(ids["net"]) is None


def test_key_pair_and_server_group(cloud, heat_on_cloud, sdk):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "key": {
                "type": "OS::Nova::KeyPair",
                "properties": {
                    "name": "heat-lite-key",
                    "save_private_key": True,
                },
            },
            "group": {
                "type": "OS::Nova::ServerGroup",
                "properties": {"policies": ["anti-affinity"]},
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "key_name": {"get_resource": "key"},
                    "scheduler_hints": {"group": {"get_resource": "group"}},
                    "networks": [{"network": cloud.network}],
                },
            },
        },
        outputs={
            "private": {"value": {"get_attr": ["key", "private_key"]}},
            "public": {"value": {"get_attr": ["key", "public_key"]}},
        },
    )
    stack_id = heat.stacks.create(stack_name="keyed", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = _physical(heat, stack_id)
    assert ids["key"] == "heat-lite-key"
    keypair = sdk.compute.get_keypair("heat-lite-key")
    outputs = _outputs(heat, stack_id)
    assert outputs["public"] == keypair.public_key
    assert "PRIVATE KEY" in outputs["private"]
    assert sdk.compute.get_server(ids["server"]).key_name == "heat-lite-key"
    group = sdk.compute.get_server_group(ids["group"])
    assert (group.policy, group.member_ids) == (
        "anti-affinity",
        [ids["server"]],
    )

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.compute.find_keypair("heat-lite-key") is None
    assert sdk.compute.find_server_group(ids["group"]) is None


def test_server_boots_with_a_multipart_user_data(cloud, heat_on_cloud, sdk):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "cc": {
                "type": "OS::Heat::CloudConfig",
                "properties": {"cloud_config": {"packages": ["httpd"]}},
            },
            "boot": {
                "type": "OS::Heat::MultipartMime",
                "properties": {
                    "parts": [
                        {"config": {"get_resource": "cc"}},
                        {
                            "config": "#!/bin/sh\necho hi\n",
                            "subtype": "x-shellscript",
                        },
                    ]
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "user_data_format": "RAW",
                    "user_data": {"get_resource": "boot"},
                    "networks": [{"network": cloud.network}],
                },
            },
        }
    )
    stack_id = heat.stacks.create(stack_name="booted", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    server_id = _physical(heat, stack_id)["server"]
    admin = cloud.connect("admin")
    try:
        raw = admin.compute.get_server(server_id).user_data
    finally:
        admin.close()
    message = email.message_from_bytes(base64.b64decode(raw))
    assert [p.get_payload() for p in message.get_payload()] == [
        "#cloud-config\npackages:\n- httpd\n",
        "#!/bin/sh\necho hi\n",
    ]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(server_id))


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
    error = helpers.http_error(
        lambda: heat.stacks.validate(
            template=with_param, parameters={"image": "no-such-image"}
        )
    )
    assert error.code == 400
    assert "glance.image" in str(error)
    valid = heat.stacks.validate(
        template=with_param, parameters={"image": cloud.image}
    )
    assert "Parameters" in valid


def test_networks_change_swaps_interfaces_in_place(cloud, heat_on_cloud, sdk):
    def tmpl(network):
        return helpers.template(
            {
                "net": {"type": "OS::Neutron::Net"},
                "subnet": {
                    "type": "OS::Neutron::Subnet",
                    "properties": {
                        "network": {"get_resource": "net"},
                        "cidr": "10.81.0.0/24",
                    },
                },
                "server": {
                    "type": "OS::Nova::Server",
                    "depends_on": "subnet",
                    "properties": {
                        "image": cloud.image,
                        "flavor": cloud.flavor,
                        "networks": [{"network": network}],
                    },
                },
            },
            outputs={
                "ip": {"value": {"get_attr": ["server", "first_address"]}}
            },
        )

    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="rewired", template=tmpl(cloud.network)
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = _physical(heat, stack_id)
    (old_port,) = sdk.network.ports(device_id=ids["server"])

    heat.stacks.update(stack_id, template=tmpl({"get_resource": "net"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id) == ids
    (port,) = sdk.network.ports(device_id=ids["server"])
    assert port.network_id == ids["net"]
    assert sdk.network.find_port(old_port.id) is None
    assert _outputs(heat, stack_id)["ip"].startswith("10.81.0.")

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(ids["server"]))
    assert sdk.network.find_network(ids["net"]) is None


def test_external_server_is_used_not_owned(cloud, heat_on_cloud, sdk):
    """external_id adopts a server made elsewhere; deleting the stack
    leaves it."""
    made = sdk.compute.create_server(
        name="made-elsewhere",
        image_id=sdk.image.find_image(cloud.image).id,
        flavor_id=sdk.compute.find_flavor(cloud.flavor).id,
        networks=[{"uuid": sdk.network.find_network(cloud.network).id}],
    )
    sdk.compute.wait_for_server(made, wait=120, interval=0.5)
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "external_id": made.id,
                "properties": {"image": cloud.image, "flavor": cloud.flavor},
            }
        },
        outputs={"ip": {"value": {"get_attr": ["server", "first_address"]}}},
    )
    stack_id = heat.stacks.create(stack_name="adopted", template=tmpl)[
        "stack"
    ]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id)["server"] == made.id
    assert _outputs(heat, stack_id)["ip"].startswith("10.10.0.")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert sdk.compute.get_server(made.id).status == "ACTIVE"
    sdk.compute.delete_server(made)
    cloud_mod.wait_gone(lambda: sdk.compute.find_server(made.id))


def test_check_finds_a_network_deleted_out_of_band(cloud, heat_on_cloud, sdk):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="checked",
        template=(helpers.template({"net": {"type": "OS::Neutron::Net"}})),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    net_id = _physical(heat, stack_id)["net"]
    sdk.network.delete_network(net_id)
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
    new_id = _physical(heat, stack_id)["net"]
    assert new_id != net_id and sdk.network.get_network(new_id)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert sdk.network.find_network(new_id) is None


def test_network_delete_waits_out_a_port_in_use(cloud, heat_on_cloud, sdk):
    """Neutron answers 409 while a port is on the network: the delete
    tries again (without a worker asleep) and ends once the port goes."""
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="busy",
        template=(helpers.template({"net": {"type": "OS::Neutron::Net"}})),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    net_id = _physical(heat, stack_id)["net"]
    stray = sdk.network.create_port(network_id=net_id)
    heat.stacks.delete(stack_id)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        assert heat.stacks.get(stack_id).stack_status == "DELETE_IN_PROGRESS"
        time.sleep(0.3)
    sdk.network.delete_port(stray)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert sdk.network.find_network(net_id) is None


def test_flavor_as_admin_and_refused_to_a_member(
    cloud, heat_as_admin, heat_on_cloud
):
    admin = cloud.connect("admin")
    demo_project = admin.identity.find_project("demo").id

    def tmpl(specs):
        return helpers.template(
            {
                "flavor": {
                    "type": "OS::Nova::Flavor",
                    "properties": {
                        "ram": 128,
                        "vcpus": 1,
                        "disk": 1,
                        "is_public": False,
                        "tenants": [demo_project],
                        "extra_specs": specs,
                    },
                }
            },
            outputs={
                "specs": {"value": {"get_attr": ["flavor", "extra_specs"]}}
            },
        )

    heat = heat_as_admin.client(project="admin")
    stack_id = heat.stacks.create(
        stack_name="flavored", template=tmpl({"hw:cpu_policy": "shared"})
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    flavor_id = _physical(heat, stack_id)["flavor"]
    flavor = admin.compute.get_flavor(flavor_id)
    assert not flavor.is_public
    assert [
        a["tenant_id"] for a in admin.compute.get_flavor_access(flavor_id)
    ] == [demo_project]
    heat.stacks.update(stack_id, template=tmpl({"hw:mem_page_size": "any"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id)["flavor"] == flavor_id
    assert admin.compute.fetch_flavor_extra_specs(flavor_id).extra_specs == {
        "hw:mem_page_size": "any"
    }
    assert _outputs(heat, stack_id)["specs"] == {"hw:mem_page_size": "any"}
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert admin.compute.find_flavor(flavor_id, ignore_missing=True) is None
    admin.close()

    # A member's heat_lite gets Nova's refusal.
    member = heat_on_cloud.client()
    stack_id = member.stacks.create(stack_name="not-mine", template=tmpl({}))[
        "stack"
    ]["id"]
    with pytest.raises(AssertionError) as failed:
        helpers.wait_for_status(
            member, stack_id, "CREATE_COMPLETE", timeout=120
        )
    assert "ForbiddenException: resources.flavor" in str(failed.value)
    member.stacks.delete(stack_id)
    helpers.wait_for_status(member, stack_id, "DELETE_COMPLETE", timeout=120)


def _assigned(admin, **query):
    return sorted(
        (a.role["id"], a.scope["project"]["id"])
        for a in admin.identity.role_assignments(**query)
    )


def test_keystone_types_as_admin(cloud, heat_as_admin):
    admin = cloud.connect("admin")
    member = admin.identity.find_role("member").id
    demo = admin.identity.find_user("demo").id

    def tmpl(user_roles):
        return helpers.template(
            {
                "project": {
                    "type": "OS::Keystone::Project",
                    "properties": {"description": "made by heat_lite"},
                },
                "role": {"type": "OS::Keystone::Role"},
                "group": {
                    "type": "OS::Keystone::Group",
                    "properties": {
                        "roles": [
                            {
                                "role": {"get_resource": "role"},
                                "project": {"get_resource": "project"},
                            }
                        ]
                    },
                },
                "user": {
                    "type": "OS::Keystone::User",
                    "properties": {
                        "password": "s3cret",
                        "groups": [{"get_resource": "group"}],
                        "default_project": {"get_resource": "project"},
                        "roles": [
                            {"role": r, "project": {"get_resource": "project"}}
                            for r in user_roles
                        ],
                    },
                },
                "grant": {
                    "type": "OS::Keystone::UserRoleAssignment",
                    "properties": {
                        "user": "demo",
                        "roles": [
                            {
                                "role": {"get_resource": "role"},
                                "project": {"get_resource": "project"},
                            }
                        ],
                    },
                },
            }
        )

    heat = heat_as_admin.client(project="admin")
    stack_id = heat.stacks.create(
        stack_name="people", template=tmpl(["member"])
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = _physical(heat, stack_id)
    project = admin.identity.get_project(ids["project"])
    assert project.description == "made by heat_lite"
    assert _assigned(admin, user_id=ids["user"]) == [(member, project.id)]
    assert _assigned(admin, group_id=ids["group"]) == [
        (ids["role"], project.id)
    ]
    assert _assigned(admin, user_id=demo, scope_project_id=project.id) == [
        (ids["role"], project.id)
    ]
    assert [g.id for g in admin.identity.user_groups(ids["user"])] == [
        ids["group"]
    ]
    assert (
        admin.identity.get_user(ids["user"]).default_project_id == project.id
    )

    heat.stacks.update(stack_id, template=tmpl([]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _physical(heat, stack_id) == ids
    assert _assigned(admin, user_id=ids["user"]) == []

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert admin.identity.find_project(ids["project"]) is None
    assert admin.identity.find_user(ids["user"]) is None
    assert admin.identity.find_group(ids["group"]) is None
    assert admin.identity.find_role(ids["role"]) is None
    assert _assigned(admin, user_id=demo, scope_project_id=project.id) == []
    admin.close()
