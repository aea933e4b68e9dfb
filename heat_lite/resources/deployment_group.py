"""OS::Heat::SoftwareDeploymentGroup and OS::Heat::StructuredDeploymentGroup:
one deployment of the same config per server, in a nested stack.

``servers`` maps a name to a server ID; each name is a member of the
nested stack, an ``OS::Heat::SoftwareDeployment`` (or
``StructuredDeployment``) with the group's other properties and that
server. Besides a group's attributes (``refs``, ``refs_map``,
``attributes``, ``resource.<name>.<attr>``), ``deploy_stdouts``,
``deploy_stderrs`` and ``deploy_status_codes`` map each name to its
deployment's value, as in Heat.
"""

import json

from heat_lite.resources import (
    base,
    resource_group,
    software_deployment,
    structured_config,
)
from heat_lite.resources import properties as p

# {group attribute: the member attribute it maps by name}
_MAPS = {
    "deploy_stdouts": "deploy_stdout",
    "deploy_stderrs": "deploy_stderr",
    "deploy_status_codes": "deploy_status_code",
}


def _schema(member):
    schema = dict(member.properties_schema)
    schema.pop("server")
    schema["servers"] = p.Schema(
        p.MAP,
        "A map of names and server IDs to apply configuration to. The "
        "name is arbitrary and is used as the Heat resource name for the "
        "corresponding deployment.",
        update_allowed=True,
        required=True,
    )
    return schema


class SoftwareDeploymentGroup(resource_group._Members):
    """One ``member_type`` per server of ``servers``."""

    member_type = "OS::Heat::SoftwareDeployment"
    properties_schema = _schema(software_deployment.SoftwareDeployment)
    attributes_schema = dict(
        resource_group._ATTRIBUTES,
        deploy_stdouts=p.Attribute(
            "A map of Nova names and captured stdouts from the "
            "configuration execution to each server.",
            "MAP",
        ),
        deploy_stderrs=p.Attribute(
            "A map of Nova names and captured stderrs from the "
            "configuration execution to each server.",
            "MAP",
        ),
        deploy_status_codes=p.Attribute(
            "A map of Nova names and returned status code from the "
            "configuration execution.",
            "MAP",
        ),
    )

    def member_names(self):
        return sorted(self.properties.get("servers") or {})

    def child_template(self):
        common = {
            key: value
            for key, value in self.properties.items()
            if key != "servers" and value is not None
        }
        servers = self.properties.get("servers") or {}
        resources = {
            name: {
                "type": self.member_type,
                "properties": dict(
                    json.loads(json.dumps(common)), server=servers[name]
                ),
            }
            for name in self.member_names()
        }
        return {
            "heat_template_version": "2015-04-30",
            "resources": resources,
        }, {}

    def get_attribute(self, name, path=()):
        if name in _MAPS:
            members = self._members()
            value = {
                n: members[n][1].get(_MAPS[name])
                for n in self.member_names()
                if n in members
            }
            return base.dig(value, path)
        return super().get_attribute(name, path)


class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """One ``OS::Heat::StructuredDeployment`` per server."""

    member_type = "OS::Heat::StructuredDeployment"
    properties_schema = _schema(structured_config.StructuredDeployment)


class SoftwareDeployments(SoftwareDeploymentGroup):
    """``OS::Heat::SoftwareDeployments``: Heat's deprecated name of
    ``OS::Heat::SoftwareDeploymentGroup``, accepted and not listed."""

    hidden_type = True


class StructuredDeployments(StructuredDeploymentGroup):
    """``OS::Heat::StructuredDeployments``: Heat's deprecated name of
    ``OS::Heat::StructuredDeploymentGroup``, accepted and not listed."""

    hidden_type = True
