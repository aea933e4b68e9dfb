"""The drift side of the plugin contract (``Resource.live_state``) that
needs no cloud; the cloud readers run against the test cloud in
tests/functional/test_cloud_drift.py."""

import pytest

from heat_lite.common.states import Action
from heat_lite.resources import (
    base,
    none,
    random_string,
    test_resource,
    value,
    wait_condition,
    wait_condition_handle,
)
from heat_lite.resources.openstack import live_neutron, live_nova


def test_a_type_that_cannot_read_its_state_says_so():
    plugin = base.Resource("r", "My::Type", {})
    with pytest.raises(NotImplementedError):
        plugin.live_state()
    assert plugin.live_expectations(Action.CREATE) == {}


@pytest.mark.parametrize(
    "cls",
    [
        none.NoneResource,
        random_string.RandomString,
        test_resource.TestResource,
        value.Value,
        wait_condition.WaitCondition,
        wait_condition_handle.WaitConditionHandle,
        wait_condition_handle.UpdateWaitConditionHandle,
    ],
)
def test_types_whose_state_is_their_record_are_in_sync(cls):
    assert cls("r", "T", {}, "id").live_state() == {}


def test_server_status_expected_after_its_last_action():
    assert live_nova.server_expectations(Action.CREATE) == {"status": "ACTIVE"}
    assert live_nova.server_expectations(Action.RESUME) == {"status": "ACTIVE"}
    assert live_nova.server_expectations(Action.SUSPEND) == {
        "status": "SUSPENDED"
    }


def test_neutron_rule_in_the_property_form():
    rule = {
        "id": "x",
        "direction": "ingress",
        "ethertype": "IPv4",
        "protocol": "tcp",
        "port_range_min": 80,
        "port_range_max": 80,
        "remote_ip_prefix": None,
        "remote_group_id": "g",
        "security_group_id": "s",
    }
    assert live_neutron._rule_property(rule) == {
        "direction": "ingress",
        "ethertype": "IPv4",
        "protocol": "tcp",
        "port_range_min": 80,
        "port_range_max": 80,
        "remote_group_id": "g",
        "remote_mode": "remote_group_id",
    }


def test_tags_compare_as_a_set():
    assert live_neutron._as_set(["b", "a"], ["a", "b"]) == ["b", "a"]
    assert live_neutron._as_set(["a"], ["a", "c"]) == ["a", "c"]
    assert live_neutron._as_set(None, []) == []
