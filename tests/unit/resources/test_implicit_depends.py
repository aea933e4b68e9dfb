"""The dependencies Heat adds without the template saying so: servers
and ports wait for the subnets of their networks."""

import pytest

from heat_lite.common import exception
from heat_lite.engine import definitions

INFO = {"name": "s", "id": "x", "project_id": "p"}


def _server(**props):
    return {
        "type": "OS::Nova::Server",
        "properties": dict({"image": "i", "flavor": "f"}, **props),
    }


def _subnet(network, cidr="10.0.0.0/24", **props):
    return {
        "type": "OS::Neutron::Subnet",
        "properties": dict({"network": network, "cidr": cidr}, **props),
    }


def _depends(resources, params=None):
    tmpl = {
        "heat_template_version": "2018-08-31",
        "parameters": params or {},
        "resources": resources,
    }
    bound = definitions.bind(tmpl, {}, {}, INFO)
    return {name: sorted(d.depends) for name, d in bound.resources.items()}


def test_a_server_waits_for_the_subnets_of_its_networks():
    deps = _depends(
        {
            "net": {"type": "OS::Neutron::Net"},
            "sub": _subnet({"get_resource": "net"}),
            "other": _subnet("mc-net", "10.0.1.0/24"),
            "on_net": _server(networks=[{"network": {"get_resource": "net"}}]),
            "by_param": _server(networks=[{"network": {"get_param": "n"}}]),
            "nowhere": _server(),
        },
        params={"n": {"type": "string", "default": "mc-net"}},
    )
    assert deps["on_net"] == ["net", "sub"]
    assert deps["by_param"] == ["other"]
    assert deps["nowhere"] == []


def test_a_network_entry_without_a_network_waits_for_every_subnet():
    deps = _depends(
        {
            "net": {"type": "OS::Neutron::Net"},
            "sub": _subnet({"get_resource": "net"}),
            "other": _subnet("mc-net", "10.0.1.0/24"),
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "net"}},
            },
            "server": _server(networks=[{"port": {"get_resource": "port"}}]),
        }
    )
    assert deps["port"] == ["net", "sub"]
    assert deps["server"] == ["other", "port", "sub"]


def test_an_added_edge_that_closes_a_cycle_is_reported():
    with pytest.raises(exception.CircularDependencyException):
        _depends(
            {
                "net": {"type": "OS::Neutron::Net"},
                "sub": _subnet(
                    {"get_resource": "net"},
                    name={"get_attr": ["server", "name"]},
                ),
                "server": _server(
                    networks=[{"network": {"get_resource": "net"}}]
                ),
            }
        )


def test_routers_and_floating_ips_wait_for_what_makes_them_work():
    deps = _depends(
        {
            "net": {"type": "OS::Neutron::Net"},
            "sub": _subnet({"get_resource": "net"}),
            "other_net": {"type": "OS::Neutron::Net"},
            "other_sub": _subnet({"get_resource": "other_net"}, "10.0.2.0/24"),
            "public_sub": _subnet("public", "172.24.9.0/24"),
            "router": {
                "type": "OS::Neutron::Router",
                "properties": {"external_gateway_info": {"network": "public"}},
            },
            "iface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": {"get_resource": "sub"},
                },
            },
            "other_iface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": {"get_resource": "other_sub"},
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {
                    "network": {"get_resource": "net"},
                    "fixed_ips": [{"subnet": {"get_resource": "sub"}}],
                },
            },
            "fip": {
                "type": "OS::Neutron::FloatingIP",
                "properties": {
                    "floating_network": "public",
                    "port_id": {"get_resource": "port"},
                },
            },
            "bare_port": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "other_net"}},
            },
            "bare_fip": {
                "type": "OS::Neutron::FloatingIP",
                "properties": {
                    "floating_network": "elsewhere",
                    "port_id": {"get_resource": "bare_port"},
                },
            },
            "assoc": {
                "type": "OS::Neutron::FloatingIPAssociation",
                "properties": {
                    "floatingip_id": "made-elsewhere",
                    "port_id": {"get_resource": "port"},
                },
            },
        }
    )
    assert deps["router"] == ["public_sub"]
    assert deps["fip"] == ["iface", "port", "router"]
    # A port without fixed IPs is on any subnet of its network.
    assert deps["bare_fip"] == ["bare_port", "other_iface"]
    # An association waits for the interface of its port's subnet only.
    assert deps["assoc"] == ["iface", "port"]


def test_an_extra_route_set_waits_for_the_interfaces_of_its_router():
    def iface(router, subnet):
        return {
            "type": "OS::Neutron::RouterInterface",
            "properties": {"router": router, "subnet": subnet},
        }

    deps = _depends(
        {
            "net": {"type": "OS::Neutron::Net"},
            "sub": _subnet({"get_resource": "net"}),
            "r0": {"type": "OS::Neutron::Router"},
            "r1": {"type": "OS::Neutron::Router"},
            "i0": iface({"get_resource": "r0"}, {"get_resource": "sub"}),
            "i1": iface({"get_resource": "r1"}, {"get_resource": "sub"}),
            "routes": {
                "type": "OS::Neutron::ExtraRouteSet",
                "properties": {"router": {"get_resource": "r0"}},
            },
        }
    )
    assert deps["routes"] == ["i0", "r0"]
