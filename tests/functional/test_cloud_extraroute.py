"""OS::Neutron::ExtraRouteSet against the test cloud (whose Neutron has
the ``extraroute-atomic`` extension): create, update and delete touch
only the set's own routes of the router; a route someone else added is
refused."""

import pytest

from harness import cloud as cloud_mod
from harness import helpers

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_demo"),
]

A = {"destination": "10.0.10.0/24", "nexthop": "10.0.0.10"}
B = {"destination": "10.0.11.0/24", "nexthop": "10.0.0.11"}
C = {"destination": "10.0.12.0/24", "nexthop": "10.0.0.12"}


def _template(routes, router=None):
    resources = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": "net"},
                "cidr": "10.0.0.0/24",
            },
        },
        "iface": {
            "type": "OS::Neutron::RouterInterface",
            "properties": {
                "router": router or {"get_resource": "router"},
                "subnet": {"get_resource": "subnet"},
            },
        },
        # No depends_on: it waits for the interface of its router.
        "routes": {
            "type": "OS::Neutron::ExtraRouteSet",
            "properties": {
                "router": router or {"get_resource": "router"},
                "routes": routes,
            },
        },
    }
    if router is None:
        resources["router"] = {"type": "OS::Neutron::Router"}
    return helpers.template(resources)


def _routes(cloud_sdk, router_id):
    router = cloud_sdk.network.get_router(router_id)
    return sorted((r["destination"], r["nexthop"]) for r in router.routes)


def _keys(*routes):
    return sorted((r["destination"], r["nexthop"]) for r in routes)


def test_extra_route_set_create_update_delete(heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    router = cloud_sdk.network.create_router(name="routed")
    try:
        stack_id = heat.stacks.create(
            stack_name="routes", template=_template([A, B], router.id)
        )["stack"]["id"]
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
        assert cloud_mod.physical(heat, stack_id)["routes"] == router.id
        assert _routes(cloud_sdk, router.id) == _keys(A, B)
        # A route the stack does not own stays through it all.
        cloud_sdk.network.add_extra_routes_to_router(
            router, {"router": {"routes": [C]}}
        )

        heat.stacks.update(stack_id, template=_template([B], router.id))
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
        assert _routes(cloud_sdk, router.id) == _keys(B, C)

        # Owned by someone else already: refused.
        heat.stacks.update(stack_id, template=_template([B, C], router.id))
        helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED", timeout=180)
        assert (
            "already exists" in heat.stacks.get(stack_id).stack_status_reason
        )
        assert _routes(cloud_sdk, router.id) == _keys(B, C)

        # C's next hop needs the stack's interface: dropped first.
        cloud_sdk.network.remove_extra_routes_from_router(
            router, {"router": {"routes": [C]}}
        )
        heat.stacks.delete(stack_id)
        helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
        assert _routes(cloud_sdk, router.id) == []
    finally:
        cloud_sdk.network.delete_router(router)


def test_extra_route_set_on_a_router_of_the_stack(heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(stack_name="routes", template=_template([]))[
        "stack"
    ]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    router_id = cloud_mod.physical(heat, stack_id)["router"]
    assert _routes(cloud_sdk, router_id) == []
    heat.stacks.update(stack_id, template=_template([A, B]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert _routes(cloud_sdk, router_id) == _keys(A, B)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
