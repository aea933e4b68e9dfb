"""OS::Nova::KeyPair, OS::Nova::ServerGroup and OS::Nova::Flavor, with
Heat 27's schemas.

A key pair's physical ID is its name. Without ``public_key`` Nova makes
the pair (openstacksdk talks microversion 2.10 to key pairs, below the
2.92 that stopped that); the private key is kept in the resource's data
only with ``save_private_key``, and is the ``private_key`` attribute.
A server group takes the first of ``policies`` (Nova allows one) and
``rules``. Neither changes in place: any change replaces it. A flavor
updates ``extra_specs`` and (when private) ``tenants`` in place; Nova
lets only administrators make flavors, so as a non-admin identity the
create fails with Nova's 403.
"""

from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, live_nova


class KeyPair(base.Resource):
    """A Nova key pair."""

    properties_schema = {
        "name": p.Schema(
            p.STRING,
            "The name of the key pair.",
            required=True,
            constraints=[constraints.Length(min=1, max=255)],
        ),
        "save_private_key": p.Schema(
            p.BOOLEAN,
            "True if the system should remember a generated "
            "private key; False otherwise.",
            default=False,
        ),
        "public_key": p.Schema(
            p.STRING,
            "The public key. This allows users to supply the "
            "public key from a pre-existing key pair. If not supplied, a new "
            "key pair will be generated.",
        ),
        "type": p.Schema(
            p.STRING,
            "Keypair type.",
            constraints=[constraints.AllowedValues(["ssh", "x509"])],
        ),
        "user": p.Schema(
            p.STRING,
            "ID of user to whom to add key-pair (administrators only).",
        ),
    }
    attributes_schema = {
        "public_key": p.Attribute("The public key.", "STRING"),
        "private_key": p.Attribute(
            "The private key if it has been saved.", "STRING"
        ),
    }

    def _compute(self):
        return client.connection(self).compute

    def handle_create(self):
        args = {"name": self.properties["name"]}
        for prop, arg in (
            ("public_key", "public_key"),
            ("type", "type"),
            ("user", "user_id"),
        ):
            if self.properties.get(prop):
                args[arg] = self.properties[prop]
        made = self._compute().create_keypair(**args)
        self.resource_id_set(made.name)
        self.data_set("public_key", made.public_key)
        if made.private_key and self.properties["save_private_key"]:
            self.data_set("private_key", made.private_key)

    def handle_delete(self):
        if self.resource_id:
            self._compute().delete_keypair(
                self.resource_id,
                ignore_missing=True,
                user_id=self.properties.get("user"),
            )

    def _resolve_attribute(self, name):
        if name == "public_key":
            return self.properties.get("public_key") or self.data().get(
                "public_key"
            )
        if name == "private_key":
            return self.data().get("private_key", "")
        return None

    def live_state(self):
        """Drift detection's view (``live_nova``)."""
        return live_nova.keypair_state(self)

    def _show_resource(self):
        if not self.resource_id:
            return None
        found = self._compute().find_keypair(self.resource_id)
        return found.to_dict() if found is not None else None


class ServerGroup(base.Resource):
    """A Nova server group."""

    properties_schema = {
        "name": p.Schema(p.STRING, "Server Group name."),
        "policies": p.Schema(
            p.LIST,
            "A list of exactly one policy to apply.",
            default=["anti-affinity"],
            schema=p.Schema(
                p.STRING,
                constraints=[
                    constraints.AllowedValues(
                        [
                            "anti-affinity",
                            "affinity",
                            "soft-anti-affinity",
                            "soft-affinity",
                        ]
                    )
                ],
            ),
            constraints=[constraints.Length(min=1, max=1)],
        ),
        "rules": p.Schema(
            p.MAP,
            "Rules for a policy.",
            schema={
                "max_server_per_host": p.Schema(
                    p.NUMBER,
                    "Maximum servers in a group on a given host. "
                    "Only for the anti-affinity policy.",
                    constraints=[constraints.Range(min=1)],
                ),
            },
        ),
    }
    attributes_schema = {}

    def _compute(self):
        return client.connection(self).compute

    def handle_create(self):
        args = {
            "name": self.properties.get("name")
            or self.physical_resource_name(),
            "policy": self.properties["policies"][0],
        }
        rules = {
            k: int(v)
            for k, v in (self.properties.get("rules") or {}).items()
            if v is not None
        }
        if rules:
            args["rules"] = rules
        self.resource_id_set(self._compute().create_server_group(**args).id)

    def handle_delete(self):
        if self.resource_id:
            self._compute().delete_server_group(
                self.resource_id, ignore_missing=True
            )

    def live_state(self):
        """Drift detection's view (``live_nova``)."""
        return live_nova.server_group_state(self)

    def _show_resource(self):
        if not self.resource_id:
            return None
        found = self._compute().find_server_group(self.resource_id)
        return found.to_dict() if found is not None else None


class Flavor(base.Resource):
    """A Nova flavor (administrators only, by Nova's default policy)."""

    properties_schema = {
        "tenants": p.Schema(
            p.LIST,
            "List of tenants.",
            default=[],
            update_allowed=True,
            schema=p.Schema(p.STRING),
        ),
        "flavorid": p.Schema(
            p.STRING,
            "Unique ID of the flavor. If not "
            "specified, an UUID will be auto generated and "
            "used.",
        ),
        "name": p.Schema(p.STRING, "Name of the flavor."),
        "ram": p.Schema(
            p.INTEGER, "Memory in MB for the flavor.", required=True
        ),
        "vcpus": p.Schema(
            p.INTEGER, "Number of VCPUs for the flavor.", required=True
        ),
        "disk": p.Schema(p.INTEGER, "Size of local disk in GB.", default=0),
        "swap": p.Schema(p.INTEGER, "Swap space in MB.", default=0),
        "ephemeral": p.Schema(
            p.INTEGER,
            "Size of a secondary ephemeral data disk in GB.",
            default=0,
        ),
        "rxtx_factor": p.Schema(p.NUMBER, "RX/TX factor.", default=1.0),
        "extra_specs": p.Schema(
            p.MAP,
            "Key/Value pairs to extend the capabilities of the flavor.",
            update_allowed=True,
        ),
        "is_public": p.Schema(
            p.BOOLEAN,
            "Scope of flavor accessibility. Public or private.",
            default=True,
        ),
    }
    attributes_schema = {
        "is_public": p.Attribute(
            "Whether the flavor is shared across all projects.", "BOOLEAN"
        ),
        "extra_specs": p.Attribute(
            "Extra specs of the flavor in key-value pairs.", "MAP"
        ),
    }

    def _compute(self):
        return client.connection(self).compute

    def handle_create(self):
        props = self.properties
        args = {
            k: props[k]
            for k in (
                "ram",
                "vcpus",
                "disk",
                "swap",
                "ephemeral",
                "rxtx_factor",
                "is_public",
            )
        }
        args["name"] = props.get("name") or self.physical_resource_name()
        if props.get("flavorid"):
            args["id"] = props["flavorid"]
        flavor = self._compute().create_flavor(**args)
        self.resource_id_set(flavor.id)
        if props.get("extra_specs"):
            self._compute().create_flavor_extra_specs(
                flavor.id, _strings(props["extra_specs"])
            )
        if not props["is_public"]:
            # Without tenants, the stack's own project gets the flavor.
            for tenant in props["tenants"] or [self.stack.get("tenant")]:
                self._compute().flavor_add_tenant_access(flavor.id, tenant)

    def handle_update(self, new_props, prop_diff):
        compute = self._compute()
        if "extra_specs" in prop_diff:
            new = _strings(new_props.get("extra_specs") or {})
            old = compute.fetch_flavor_extra_specs(self.resource_id)
            for key in set(old.extra_specs or {}) - set(new):
                compute.delete_flavor_extra_specs_property(
                    self.resource_id, key
                )
            if new:
                compute.create_flavor_extra_specs(self.resource_id, new)
        if "tenants" in prop_diff and not new_props["is_public"]:
            old = set(self.properties.get("tenants") or [])
            new = set(new_props.get("tenants") or [])
            for tenant in new - old:
                compute.flavor_add_tenant_access(self.resource_id, tenant)
            for tenant in old - new:
                compute.flavor_remove_tenant_access(self.resource_id, tenant)
        self.properties = new_props

    def handle_delete(self):
        if self.resource_id:
            self._compute().delete_flavor(
                self.resource_id, ignore_missing=True
            )

    def _flavor(self):
        if not self.resource_id:
            return None
        return self._compute().find_flavor(
            self.resource_id, ignore_missing=True
        )

    def _resolve_attribute(self, name):
        flavor = self._flavor()
        if flavor is None:
            return None
        if name == "is_public":
            return flavor.is_public
        if name == "extra_specs":
            return (
                self._compute().fetch_flavor_extra_specs(flavor.id).extra_specs
            )
        return None

    def live_state(self):
        """Drift detection's view (``live_nova``)."""
        return live_nova.flavor_state(self)

    def _show_resource(self):
        flavor = self._flavor()
        return flavor.to_dict() if flavor is not None else None


def _strings(specs):
    return {k: str(v) for k, v in specs.items()}
