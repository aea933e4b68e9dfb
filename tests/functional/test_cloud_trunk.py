"""OS::Neutron::Trunk against the test cloud (whose Neutron loads the
trunk service plugin, tools/minicloud): create with two subports, an
update that removes one and adds another in place, a refused change of
the parent port, delete; the cloud's side checked with openstacksdk."""

import pytest

from harness import cloud as cloud_mod
from harness import helpers

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    # Stacks deleted and the cloud (trunks too) checked after the test.
    pytest.mark.usefixtures("cloud_ledger_demo"),
]


def _template(sub_ports, parent="parent", name="trunk-one"):
    def port(net):
        return {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": net}},
        }

    return helpers.template(
        {
            "net": {"type": "OS::Neutron::Net"},
            "vlans": {"type": "OS::Neutron::Net"},
            "parent": port("net"),
            "other_parent": port("net"),
            "a": port("vlans"),
            "b": port("vlans"),
            "c": port("vlans"),
            # No depends_on: the ports are get_resource references.
            "trunk": {
                "type": "OS::Neutron::Trunk",
                "properties": {
                    "name": name,
                    "port": {"get_resource": parent},
                    "sub_ports": [
                        {
                            "port": {"get_resource": sub},
                            "segmentation_type": "vlan",
                            "segmentation_id": vlan,
                        }
                        for sub, vlan in sub_ports
                    ],
                },
            },
        },
        outputs={"parent": {"value": {"get_attr": ["trunk", "port_id"]}}},
    )


def _live(cloud_sdk, trunk_id):
    trunk = cloud_sdk.network.get_trunk(trunk_id)
    subs = {
        (s["port_id"], s["segmentation_type"], s["segmentation_id"])
        for s in trunk.sub_ports
    }
    return trunk, subs


def test_trunk_subports_update_in_place(heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="trunked", template=_template([("a", 10), ("b", 20)])
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    trunk, subs = _live(cloud_sdk, ids["trunk"])
    assert trunk.name == "trunk-one"
    assert trunk.port_id == ids["parent"]
    assert subs == {(ids["a"], "vlan", 10), (ids["b"], "vlan", 20)}
    assert cloud_mod.outputs(heat, stack_id)["parent"] == ids["parent"]

    # b leaves, c joins, a's VLAN changes; the trunk is the same one.
    heat.stacks.update(
        stack_id,
        template=_template([("a", 11), ("c", 30)], name="trunk-two"),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["trunk"] == ids["trunk"]
    trunk, subs = _live(cloud_sdk, ids["trunk"])
    assert trunk.name == "trunk-two"
    assert subs == {(ids["a"], "vlan", 11), (ids["c"], "vlan", 30)}

    # The parent port may never change (Heat: immutable).
    heat.stacks.update(
        stack_id,
        template=_template([("a", 11)], parent="other_parent"),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED", timeout=180)
    reason = heat.stacks.get(stack_id).stack_status_reason
    assert "Update to property port of trunk" in reason
    assert _live(cloud_sdk, ids["trunk"])[1] == subs

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert cloud_sdk.network.find_trunk(ids["trunk"]) is None
