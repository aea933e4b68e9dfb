"""OS::Heat::SoftwareConfig: a stored, immutable piece of configuration.

A config describes what a configuration tool (``group``) should run on a
server, with the schema of its inputs and outputs. Configs are immutable
in Heat, so no property is ``update_allowed``: any change makes a new
config (a replacement with a new ID) and the old one goes away with the
old resource. The config is a row of the ``software_config`` table, the
one ``/software_configs`` serves, so ``openstack software config show``
finds it; its ID (a UUID) is the physical ID that ``get_resource`` gives
to deployments, and deleting the resource deletes the row.
"""

import uuid

from heat_lite.common import exception
from heat_lite.resources import base
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p

IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")


def _io_schema(extra):
    schema = {
        "name": p.Schema(p.STRING, "Name of the value.", required=True),
        "description": p.Schema(p.STRING, "Description of the value."),
        "type": p.Schema(
            p.STRING,
            "Type of the value.",
            default="String",
            constraints=[c.AllowedValues(IO_TYPES)],
        ),
    }
    schema.update(extra)
    return schema


INPUT_SCHEMA = _io_schema(
    {
        "default": p.Schema(
            p.ANY, "Default value for the input if none is specified."
        ),
        "replace_on_change": p.Schema(
            p.BOOLEAN,
            "Replace the deployment instead of updating it when "
            "the input value changes.",
            default=False,
        ),
    }
)
OUTPUT_SCHEMA = _io_schema(
    {
        "error_output": p.Schema(
            p.BOOLEAN,
            "Denotes that the deployment is in an error state if "
            "this output has a value.",
            default=False,
        ),
    }
)


class SoftwareConfig(base.Resource):
    """Heat's properties and attribute; see the module docstring."""

    properties_schema = {
        "group": p.Schema(
            p.STRING,
            "Namespace to group this software "
            "config by when delivered to a server. This may "
            "imply what configuration tool is going to "
            "perform the configuration.",
            default="Heat::Ungrouped",
        ),
        "config": p.Schema(
            p.STRING,
            "Configuration script or manifest "
            "which specifies what actual configuration is "
            "performed.",
        ),
        "options": p.Schema(
            p.MAP,
            "Map containing options specific to the "
            "configuration management tool used by this "
            "resource.",
        ),
        "inputs": p.Schema(
            p.LIST,
            "Schema representing the inputs that "
            "this software config is expecting.",
            schema=INPUT_SCHEMA,
        ),
        "outputs": p.Schema(
            p.LIST,
            "Schema representing the outputs that "
            "this software config will produce.",
            schema=OUTPUT_SCHEMA,
        ),
    }
    attributes_schema = {
        "config": p.Attribute(
            "The config value of the software config.", type="string"
        ),
    }

    @property
    def store(self):
        """Where configs are kept (``services.software_configs``: the
        engine's ``heat_lite.db.software_configs``; a unit test passes a
        fake store), so that plugins never import the database layer."""
        return self.services.software_configs

    def _tenant(self):
        return self.stack.get("tenant") or ""

    def handle_create(self):
        config_id = str(uuid.uuid4())
        self.store.software_config_create(
            {
                "id": config_id,
                "tenant": self._tenant(),
                "name": self.physical_resource_name(),
                "group": self.properties.get("group"),
                "config": self.properties.get("config"),
                "options": self.properties.get("options") or {},
                "inputs": self.properties.get("inputs") or [],
                "outputs": self.properties.get("outputs") or [],
            }
        )
        self.resource_id_set(config_id)

    def handle_delete(self):
        if not self.resource_id:
            return
        try:
            self.store.software_config_delete(self.resource_id, self._tenant())
        except exception.NotFound:
            pass  # already deleted through the API

    def live_state(self):
        """Drift: a config never changes; deleted through the
        software_configs API it is DELETED (engine.drift)."""
        if self.software_config() is None:
            raise base.ResourceGone()
        return {}

    def software_config(self):
        """The stored config, as the software_configs API shows it (None
        before create or once deleted)."""
        if not self.resource_id:
            return None
        try:
            return self.store.software_config_get(
                self.resource_id, self._tenant()
            )
        except exception.NotFound:
            return None

    def _resolve_attribute(self, name):
        if name == "config":
            stored = self.software_config()
            return stored.get("config") if stored else None
        return None
