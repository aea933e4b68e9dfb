"""OS::Nova::Server (with the Neutron types it sits on) against the test
cloud. heat-lite-all (noauth) acts in the cloud as its non-admin
``demo`` user (``[openstack] cloud = minicloud-demo``), or as ``admin``
for admin-only types (fixtures in conftest.py). Every check of the
cloud's side goes through openstacksdk: what the stack says exists must
exist, and nothing may be left after a delete.
"""

import base64
import email
import ipaddress

import pytest

from harness import cloud as cloud_mod
from harness import helpers

# The first test also waits for the cloud: its venv install and start.
pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    # Stacks deleted and the cloud checked after each test.
    pytest.mark.usefixtures("cloud_ledger_demo"),
]

CIDR = "10.77.0.0/24"


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


def test_net_subnet_server_lifecycle(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="cloudy",
        template=_template(cloud, "web-1", {"role": "web", "n": 1}),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    server = cloud_sdk.compute.get_server(ids["server"])
    assert server.status == "ACTIVE"
    assert server.name == "web-1"
    assert server.metadata == {"role": "web", "n": "1"}
    assert cloud_sdk.network.get_network(ids["net"]).subnet_ids == [
        ids["subnet"]
    ]
    outputs = cloud_mod.outputs(heat, stack_id)
    assert ipaddress.ip_address(outputs["ip"]) in ipaddress.ip_network(CIDR)
    assert outputs["networks"][outputs["net_name"]] == [outputs["ip"]]
    assert outputs["networks"][ids["net"]] == [outputs["ip"]]
    assert outputs["cidr"] == CIDR
    address = outputs["addresses"][outputs["net_name"]][0]
    assert address["addr"] == outputs["ip"]
    assert address["network"] == ids["net"]
    assert address["subnets"] == [{"id": ids["subnet"]}]
    (port,) = cloud_sdk.network.ports(device_id=ids["server"])
    assert address["port"] == port.id

    # In place: a new name and new metadata keep the same server.
    heat.stacks.update(
        stack_id, template=_template(cloud, "web-2", {"role": "db"})
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id) == ids
    server = cloud_sdk.compute.get_server(ids["server"])
    assert server.name == "web-2"
    assert server.metadata == {"role": "db"}
    assert cloud_mod.outputs(heat, stack_id)["name"] == "web-2"

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.network.find_network(ids["net"]) is None
    assert cloud_sdk.network.find_subnet(ids["subnet"]) is None
    assert not list(cloud_sdk.network.ports(network_id=ids["net"]))


def test_server_in_error_fails_with_nova_fault(
    cloud, heat_on_cloud, cloud_sdk
):
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
    server_id = cloud_mod.physical(heat, stack_id)["server"]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(server_id))


def test_server_without_networks_gets_the_project_network(
    cloud, heat_on_cloud, cloud_sdk
):
    """Heat fails this above microversion 2.36; Nova's ``auto`` picks
    the one network the project can use (the shared mc-net)."""
    visible = sorted(
        n.name
        for n in cloud_sdk.network.networks()
        if not n.is_router_external
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
    server_id = cloud_mod.physical(heat, stack_id)["server"]
    assert list(cloud_sdk.compute.get_server(server_id).addresses) == [
        cloud.network
    ]
    assert cloud_mod.outputs(heat, stack_id)["ip"].startswith("10.10.0.")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(server_id))


def test_suspend_resume_check_and_replace_after_out_of_band_stop(
    cloud, heat_on_cloud, cloud_sdk
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
    server_id = cloud_mod.physical(heat, stack_id)["server"]

    heat.actions.suspend(stack_id)
    helpers.wait_for_status(heat, stack_id, "SUSPEND_COMPLETE", timeout=120)
    assert cloud_sdk.compute.get_server(server_id).status == "SUSPENDED"
    heat.actions.resume(stack_id)
    helpers.wait_for_status(heat, stack_id, "RESUME_COMPLETE", timeout=120)
    assert cloud_sdk.compute.get_server(server_id).status == "ACTIVE"
    heat.actions.check(stack_id)
    helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE", timeout=120)

    # Stopped behind heat_lite's back: the check says so ...
    cloud_sdk.compute.stop_server(server_id)
    cloud_mod.wait_server(cloud_sdk, server_id, "SHUTOFF")
    heat.actions.check(stack_id)
    with pytest.raises(AssertionError):
        helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE", timeout=120)
    res = heat.resources.get(stack_id, "server")
    assert res.resource_status == "CHECK_FAILED"
    assert res.resource_status_reason == (
        "Error: resources.server: 'status': expected 'ACTIVE', got 'SHUTOFF'"
    )
    # ... and the next update replaces it.
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    new_id = cloud_mod.physical(heat, stack_id)["server"]
    assert new_id != server_id
    assert cloud_sdk.compute.get_server(new_id).status == "ACTIVE"
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(server_id))

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(new_id))


def test_flavor_change_resizes_and_image_change_rebuilds(
    cloud, heat_on_cloud, cloud_sdk
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
    server_id = cloud_mod.physical(heat, stack_id)["server"]

    heat.stacks.update(stack_id, template=tmpl("mc-small", cloud.image))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["server"] == server_id
    server = cloud_sdk.compute.get_server(server_id)
    assert (server.status, server.flavor.name) == ("ACTIVE", "mc-small")

    heat.stacks.update(stack_id, template=tmpl("mc-small", "mc-image-2"))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["server"] == server_id
    server = cloud_sdk.compute.get_server(server_id)
    assert (server.status, server.image.id) == ("ACTIVE", other.id)

    heat.stacks.update(
        stack_id,
        template=tmpl(cloud.flavor, "mc-image-2", flavor_policy="REPLACE"),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    new_id = cloud_mod.physical(heat, stack_id)["server"]
    assert new_id != server_id
    assert cloud_sdk.compute.get_server(new_id).flavor.name == cloud.flavor
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(server_id))

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(new_id))


def test_server_on_a_port_of_the_stack(cloud, heat_on_cloud, cloud_sdk):
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
    ids = cloud_mod.physical(heat, stack_id)
    port = cloud_sdk.network.get_port(ids["port"])
    assert port.device_id == ids["server"]
    assert port.fixed_ips == [
        {"subnet_id": ids["subnet"], "ip_address": "10.78.0.200"}
    ]
    outputs = cloud_mod.outputs(heat, stack_id)
    assert outputs["ip"] == "10.78.0.200"
    assert outputs["mac"] == port.mac_address
    assert [s["id"] for s in outputs["subnets"]] == [ids["subnet"]]

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.network.find_port(ids["port"]) is None
    assert cloud_sdk.network.find_network(ids["net"]) is None


def test_networks_change_swaps_interfaces_in_place(
    cloud, heat_on_cloud, cloud_sdk
):
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
    ids = cloud_mod.physical(heat, stack_id)
    (old_port,) = cloud_sdk.network.ports(device_id=ids["server"])

    heat.stacks.update(stack_id, template=tmpl({"get_resource": "net"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id) == ids
    (port,) = cloud_sdk.network.ports(device_id=ids["server"])
    assert port.network_id == ids["net"]
    assert cloud_sdk.network.find_port(old_port.id) is None
    assert cloud_mod.outputs(heat, stack_id)["ip"].startswith("10.81.0.")

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.network.find_network(ids["net"]) is None


def test_external_server_is_used_not_owned(cloud, heat_on_cloud, cloud_sdk):
    """external_id adopts a server made elsewhere; deleting the stack
    leaves it. Its properties are not checked as for a server to create
    (as Heat): a flavor this cloud does not have is no 400."""
    made = cloud_sdk.compute.create_server(
        name="made-elsewhere",
        image_id=cloud_sdk.image.find_image(cloud.image).id,
        flavor_id=cloud_sdk.compute.find_flavor(cloud.flavor).id,
        networks=[{"uuid": cloud_sdk.network.find_network(cloud.network).id}],
    )
    cloud_sdk.compute.wait_for_server(made, wait=120, interval=0.5)
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "external_id": made.id,
                "properties": {"flavor": "not-a-flavor-here"},
            }
        },
        outputs={"ip": {"value": {"get_attr": ["server", "first_address"]}}},
    )
    stack_id = heat.stacks.create(stack_name="adopted", template=tmpl)[
        "stack"
    ]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["server"] == made.id
    assert cloud_mod.outputs(heat, stack_id)["ip"].startswith("10.10.0.")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert cloud_sdk.compute.get_server(made.id).status == "ACTIVE"
    cloud_sdk.compute.delete_server(made)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(made.id))


def _booted(cloud, user_data_format):
    return {
        "type": "OS::Nova::Server",
        "properties": {
            "image": cloud.image,
            "flavor": cloud.flavor,
            "user_data_format": user_data_format,
            "user_data": {"get_resource": "boot"},
            "networks": [{"network": cloud.network}],
        },
    }


def test_server_boots_with_a_multipart_user_data(
    cloud, heat_on_cloud, cloud_sdk
):
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
            # The same config, as it is and packed for software config.
            "server": _booted(cloud, "RAW"),
            "agent": _booted(cloud, "SOFTWARE_CONFIG"),
        }
    )
    stack_id = heat.stacks.create(stack_name="booted", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    admin = cloud.connect("admin")
    try:
        raw, packed = (
            email.message_from_bytes(
                base64.b64decode(admin.compute.get_server(ids[n]).user_data)
            ).get_payload()
            for n in ("server", "agent")
        )
    finally:
        admin.close()
    ours = ["#cloud-config\npackages:\n- httpd\n", "#!/bin/sh\necho hi\n"]
    assert [p.get_payload() for p in raw] == ours
    # SOFTWARE_CONFIG: Heat's packing around the same parts.
    assert [p.get_content_type() for p in packed] == [
        "text/cloud-config",
        "text/part-handler",
        "text/plain",
        "text/x-shellscript",
        "text/x-cfninitdata",
    ]
    assert [p.get_payload() for p in packed[2:4]] == ours
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    for name in ("server", "agent"):
        cloud_mod.wait_gone(
            lambda i=ids[name]: cloud_sdk.compute.find_server(i)
        )
