"""OS::Nova::KeyPair and OS::Nova::ServerGroup, with Heat 27's schemas.

A key pair's physical ID is its name. Without ``public_key`` Nova makes
the pair (openstacksdk talks microversion 2.10 to key pairs, below the
2.92 that stopped that); the private key is kept in the resource's data
only with ``save_private_key``, and is the ``private_key`` attribute.
A server group takes the first of ``policies`` (Nova allows one) and
``rules``. Neither type changes in place: any change replaces it.
"""

from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client


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

    def _show_resource(self):
        if not self.resource_id:
            return None
        found = self._compute().find_server_group(self.resource_id)
        return found.to_dict() if found is not None else None
