"""Heat's deprecated Neutron property names, as real templates use them
(openstack/heat-templates' ``hot/servers_in_existing_neutron_net.yaml``
and ``hot/servers_in_new_neutron_net.yaml``): each is taken as the name
that replaced it, and giving both is refused with 400, as Heat's REPLACE
translation rules do."""

import pytest

from heat_lite.common import exception
from heat_lite.engine import validation
from heat_lite.resources.openstack import neutron_floating_ip, neutron_router

PATH = "resources.r.properties"
INFO = {"name": "s", "id": "x", "project_id": "p"}
FloatingIP = neutron_floating_ip.FloatingIP
RouterInterface = neutron_router.RouterInterface


def test_floating_network_id_is_floating_network():
    props = FloatingIP.validate_properties(
        {"floating_network_id": "public"}, PATH
    )
    assert props["floating_network"] == "public"
    assert "floating_network_id" not in props
    # From a function not resolved yet (validation of a new stack).
    FloatingIP.validate_properties({}, PATH, ["floating_network_id"])


@pytest.mark.parametrize(
    "values, unresolved",
    [
        ({"floating_network_id": "public", "floating_network": "p"}, ()),
        ({"floating_network": "public"}, ["floating_network_id"]),
    ],
)
def test_floating_network_and_its_old_name_are_refused(values, unresolved):
    with pytest.raises(exception.StackValidationFailed) as err:
        FloatingIP.validate_properties(values, PATH, unresolved)
    assert err.value.code == 400
    assert str(err.value) == (
        "resources.r.properties: Cannot define the following properties "
        "at the same time: floating_network, floating_network_id."
    )


def test_router_interface_old_names_are_the_new_ones():
    props = RouterInterface.validate_properties(
        {"router_id": "r1", "subnet_id": "s1"}, PATH
    )
    assert (props["router"], props["subnet"], props["port"]) == (
        "r1",
        "s1",
        None,
    )
    assert not {"router_id", "subnet_id", "port_id"} & set(props)
    props = RouterInterface.validate_properties(
        {"router": "r1"}, PATH, ["port_id"]
    )
    assert props["router"] == "r1"


def test_router_and_router_id_are_refused():
    with pytest.raises(exception.StackValidationFailed) as err:
        RouterInterface.validate_properties(
            {"router": "r1", "router_id": "r1", "subnet": "s1"}, PATH
        )
    assert "at the same time: router, router_id." in str(err.value)


def _template(resources):
    return {
        "heat_template_version": "2013-05-23",
        "parameters": {"public_net_id": {"type": "string"}},
        "resources": resources,
    }


def test_the_real_templates_shapes_validate_and_depend_as_before():
    """The resources of both templates that used the old names: they
    pass validation, and a floating IP on its old name still waits for
    the router whose gateway is on its network."""
    bound = validation.bind(
        _template(
            {
                "net": {"type": "OS::Neutron::Net"},
                "sub": {
                    "type": "OS::Neutron::Subnet",
                    "properties": {
                        "network_id": {"get_resource": "net"},
                        "cidr": "10.0.0.0/24",
                    },
                },
                "router": {
                    "type": "OS::Neutron::Router",
                    "properties": {
                        "external_gateway_info": {
                            "network": {"get_param": "public_net_id"}
                        }
                    },
                },
                "iface": {
                    "type": "OS::Neutron::RouterInterface",
                    "properties": {
                        "router_id": {"get_resource": "router"},
                        "subnet_id": {"get_resource": "sub"},
                    },
                },
                "port": {
                    "type": "OS::Neutron::Port",
                    "properties": {
                        "network_id": {"get_resource": "net"},
                        "fixed_ips": [{"subnet_id": {"get_resource": "sub"}}],
                    },
                },
                "fip": {
                    "type": "OS::Neutron::FloatingIP",
                    "properties": {
                        "floating_network_id": {"get_param": "public_net_id"},
                        "port_id": {"get_resource": "port"},
                    },
                },
            }
        ),
        {"parameters": {"public_net_id": "public"}},
        {},
        INFO,
    )
    assert sorted(bound.resources["fip"].depends) == [
        "iface",
        "port",
        "router",
    ]
    assert sorted(bound.resources["iface"].depends) == ["router", "sub"]


def test_a_template_with_both_names_is_refused():
    with pytest.raises(exception.StackValidationFailed) as err:
        validation.bind(
            _template(
                {
                    "fip": {
                        "type": "OS::Neutron::FloatingIP",
                        "properties": {
                            "floating_network": "public",
                            "floating_network_id": {
                                "get_param": "public_net_id"
                            },
                        },
                    }
                }
            ),
            {"parameters": {"public_net_id": "public"}},
            {},
            INFO,
        )
    assert err.value.code == 400
    assert "floating_network, floating_network_id" in str(err.value)
