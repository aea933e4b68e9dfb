"""OS::Neutron::Trunk (Heat 27's schema; see ``neutron`` for how requests
are made and polled), through Neutron's ``trunk`` extension.

A trunk is a parent port and any number of subports, each a port with a
VLAN ID on which the instance sees that port's network. ``port`` (the
parent) may never change. ``sub_ports`` changes in place as Heat does
it: the old and the new lists are compared as sets of (port, type, ID)
-- ports found by name or ID -- and only the difference is sent, first
the subports no longer listed are removed (a port cannot be two
subports at once, so a changed segmentation ID is a removal and an
addition), then the new ones are added. ``name``, ``description`` and
``admin_state_up`` are sent before that (a trunk disabled refuses
subport changes). A trunk stays DOWN in a cloud without an agent, which
counts as built.
"""

from heat_lite.resources import constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, neutron


def _sub_port_schema():
    return p.Schema(
        p.MAP,
        schema={
            "port": p.Schema(
                p.STRING,
                "ID or name of a port to be used as a subport.",
                required=True,
                constraints=[constraints.CustomConstraint("neutron.port")],
            ),
            "segmentation_type": p.Schema(
                p.STRING,
                "Segmentation type to be used on the subport.",
                required=True,
                constraints=[constraints.AllowedValues(["vlan"])],
            ),
            "segmentation_id": p.Schema(
                p.INTEGER,
                "The segmentation ID on which the subport network is "
                "presented to the instance.",
                required=True,
                constraints=[constraints.Range(1, 4094)],
            ),
        },
    )


def sub_port_changes(old, new):
    """(removed, added): the subport keys (port, type, ID) of ``old``
    not in ``new``, and of ``new`` not in ``old``, each sorted."""
    old, new = set(old), set(new)
    return sorted(old - new), sorted(new - old)


class Trunk(neutron.NeutronResource):
    """A Neutron trunk."""

    entity = "trunk"
    local_props = neutron.NeutronResource.local_props + ("port", "sub_ports")
    properties_schema = {
        "name": p.Schema(
            p.STRING,
            "A string specifying a symbolic name for the trunk, which is "
            "not required to be uniqe.",
            update_allowed=True,
        ),
        "port": p.Schema(
            p.STRING,
            "ID or name of a port to be used as a parent port.",
            required=True,
            immutable=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        "sub_ports": p.Schema(
            p.LIST,
            "List with 0 or more map elements containing subport details.",
            schema=_sub_port_schema(),
            update_allowed=True,
        ),
        "description": p.Schema(
            p.STRING, "Description for the trunk.", update_allowed=True
        ),
        "admin_state_up": p.Schema(
            p.BOOLEAN,
            "Enable/disable subport addition, removal and trunk delete.",
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "port_id": p.Attribute(
            "ID or name of a port used as a parent port.", "STRING"
        ),
    }

    def _port_id(self, name_or_id, must_exist=True):
        found = client.connection(self).network.find_port(
            name_or_id, ignore_missing=not must_exist
        )
        return found.id if found is not None else name_or_id

    def _key(self, sub_port, must_exist=True):
        """(port ID, type, segmentation ID) of a ``sub_ports`` entry.
        With ``must_exist`` False a port no longer found keeps its
        reference (the old list's ports may be gone)."""
        return (
            self._port_id(sub_port["port"], must_exist),
            sub_port["segmentation_type"],
            sub_port["segmentation_id"],
        )

    @staticmethod
    def _sub_ports_body(keys, ports_only=False):
        """The ``{"sub_ports": [...]}`` body for subport keys."""
        if ports_only:
            return {"sub_ports": [{"port_id": key[0]} for key in keys]}
        return {
            "sub_ports": [
                {
                    "port_id": port,
                    "segmentation_type": seg_type,
                    "segmentation_id": seg_id,
                }
                for port, seg_type, seg_id in keys
            ]
        }

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        body["port_id"] = self._port_id(props["port"])
        if props.get("sub_ports"):
            # As listed (a repeated port is Neutron's to refuse).
            body.update(
                self._sub_ports_body(
                    [self._key(sp) for sp in props["sub_ports"]]
                )
            )
        return body

    def handle_update(self, new_props, prop_diff):
        changed = set(prop_diff)
        removed, added = (), ()
        if "sub_ports" in changed:
            removed, added = sub_port_changes(
                {
                    self._key(sp, must_exist=False)
                    for sp in self.properties.get("sub_ports") or ()
                },
                {self._key(sp) for sp in new_props.get("sub_ports") or ()},
            )
        body = self._prepare_update(new_props, changed - {"sub_ports"})
        if body:
            self._request("PUT", "/" + self.resource_id, {"trunk": body})
        if removed:
            self._request(
                "PUT",
                "/%s/remove_subports" % self.resource_id,
                self._sub_ports_body(removed, ports_only=True),
            )
        if added:
            self._request(
                "PUT",
                "/%s/add_subports" % self.resource_id,
                self._sub_ports_body(added),
            )
        self.properties = new_props
        return True
