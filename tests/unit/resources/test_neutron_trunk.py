"""OS::Neutron::Trunk without a cloud: its schema's checks and the
subport diff an update sends (the cloud test is
tests/functional/test_cloud_trunk.py)."""

import pytest

from heat_lite.common import exception
from heat_lite.resources import registry
from heat_lite.resources.openstack import neutron_trunk

PATH = "resources.r.properties"
Trunk = neutron_trunk.Trunk


def _sub(port="p1", seg_type="vlan", seg_id=10):
    return {
        "port": port,
        "segmentation_type": seg_type,
        "segmentation_id": seg_id,
    }


def test_trunk_is_registered():
    assert registry.load()["OS::Neutron::Trunk"] is Trunk


@pytest.mark.parametrize(
    "sub_port, message",
    [
        (_sub(seg_type="vxlan"), "segmentation_type"),
        (_sub(seg_id=0), "segmentation_id"),
        (_sub(seg_id=4095), "segmentation_id"),
        ({"port": "p1", "segmentation_type": "vlan"}, "segmentation_id"),
    ],
)
def test_a_sub_port_needs_a_vlan_id_in_range(sub_port, message):
    with pytest.raises(exception.StackValidationFailed) as err:
        Trunk.validate_properties(
            {"port": "p0", "sub_ports": [sub_port]}, PATH
        )
    assert message in str(err.value)


def test_a_trunk_needs_a_parent_port_that_never_changes():
    with pytest.raises(exception.StackValidationFailed) as err:
        Trunk.validate_properties({"sub_ports": []}, PATH)
    assert "Property port not assigned" in str(err.value)
    props = Trunk.validate_properties({"port": "p0", "sub_ports": None}, PATH)
    trunk = Trunk("r", "OS::Neutron::Trunk", props, stack={"name": "s"})
    assert trunk.immutable_changes({"port": "p9", "name": "n"}) == ["port"]
    assert not trunk.needs_replace(
        dict(props, sub_ports=[_sub()], name="n"), {"sub_ports", "name"}
    )


def test_an_update_sends_only_the_changed_sub_ports():
    old = {("a", "vlan", 10), ("b", "vlan", 20)}
    # b's VLAN changes (removed and added), c is new, a stays.
    new = {("a", "vlan", 10), ("b", "vlan", 99), ("c", "vlan", 30)}
    assert neutron_trunk.sub_port_changes(old, new) == (
        [("b", "vlan", 20)],
        [("b", "vlan", 99), ("c", "vlan", 30)],
    )
    assert neutron_trunk.sub_port_changes(old, old) == ([], [])
