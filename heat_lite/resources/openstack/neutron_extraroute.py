"""OS::Neutron::ExtraRouteSet: a set of extra routes of a router (Heat
27's schema), through Neutron's ``extraroute-atomic`` extension.

Create adds the routes to the router (refusing one the router already
has, as Heat: two owners of one route would remove it from each
other); an update removes the routes no longer listed, then adds the new
ones, so the routes kept are never missing; delete removes the set's
routes (those it added, as its data records them), leaving the
router's others. A set has no physical ID of its
own: its ID is the router's. It waits for the router interfaces of its
router in the stack (a next hop must be on a connected subnet).
"""

from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import (
    client,
    live_neutron,
    neutron_subnet,
)
from heat_lite.resources.openstack import implicit_depends as implicit
from heat_lite.resources.openstack.client import sdk_exc


def _keys(routes):
    return {(r["destination"], r["nexthop"]) for r in routes or ()}


def _routes(keys):
    return [{"destination": d, "nexthop": n} for d, n in sorted(keys)]


class ExtraRouteSet(base.Resource):
    """Extra routes of one router; see the module docstring."""

    properties_schema = {
        "router": p.Schema(
            p.STRING,
            "The router id.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        "routes": p.Schema(
            p.LIST,
            "A set of route dictionaries for the router.",
            schema=neutron_subnet.route_schema(
                "The destination network in CIDR notation."
            ),
            default=[],
            update_allowed=True,
        ),
    }
    attributes_schema = {}
    implicit_depends = staticmethod(implicit.extra_route_set)

    def _network(self):
        return client.connection(self).network

    def _router_id(self):
        return (
            self._network()
            .find_router(self.properties["router"], ignore_missing=False)
            .id
        )

    def _add(self, router_id, keys):
        existing = _keys(self._network().get_router(router_id).routes)
        taken = sorted(keys & existing)
        if taken:
            raise client.Error(
                message="The Resource (%s) already exists."
                % ",".join([router_id] + ["%s=%s" % route for route in taken])
            )
        if keys:
            self._network().add_extra_routes_to_router(
                router_id, {"router": {"routes": _routes(keys)}}
            )

    def _remove(self, router_id, keys):
        if keys:
            self._network().remove_extra_routes_from_router(
                router_id, {"router": {"routes": _routes(keys)}}
            )

    def _owned(self):
        """The routes this set added (kept in its data: after a refused
        update the properties list routes it does not own)."""
        owned = self.data().get("routes")
        if owned is None:
            return _keys(self.properties["routes"])
        return {tuple(route) for route in owned}

    def _own(self, keys):
        self.data_set("routes", sorted(list(route) for route in keys))

    def handle_create(self):
        router_id = self._router_id()
        self.resource_id_set(router_id)
        routes = _keys(self.properties["routes"])
        self._add(router_id, routes)
        self._own(routes)

    def handle_update(self, new_props, prop_diff):
        owned, new = self._owned(), _keys(new_props["routes"])
        self._remove(self.resource_id, owned - new)
        self._own(owned & new)
        self._add(self.resource_id, new - owned)
        self._own(new)
        self.properties = new_props

    def live_state(self):
        """Drift detection's view (``live_neutron``)."""
        return live_neutron.extra_routes_state(self)

    def handle_delete(self):
        if not self.resource_id:
            return
        try:
            self._remove(self.resource_id, self._owned())
        except sdk_exc.NotFoundException:
            pass  # the router is gone, and its routes with it
