"""The software-config half of the engine endpoint (``/software_configs``).

A config is checked against ``OS::Heat::SoftwareConfig``'s property
schema, so the API and the resource type accept the same documents, and
is stored in the caller's project.
"""

import uuid

from heat_lite.db import software_configs as db_configs
from heat_lite.engine.endpoint.base import TARGET, expected
from heat_lite.resources import software_config

DEFAULT_GROUP = "Heat::Ungrouped"


def view(config, detail=True, project=True):
    """A config in Heat's engine format (summary when not ``detail``;
    without its project when not ``project``, as in a server's
    deployment metadata)."""
    result = {
        "id": config["id"],
        "name": config["name"],
        "group": config["group"],
        "creation_time": config["created_at"].isoformat(),
    }
    if detail:
        result.update({key: config[key] for key in db_configs.BODY_KEYS})
        if project:
            result["project"] = config["tenant"]
    return result


class SoftwareConfigEndpoint:
    """Create, list, show and delete software configs."""

    target = TARGET

    @expected
    def create_software_config(
        self, ctxt, name, group, config, inputs, outputs, options
    ):
        values = {
            "group": group or DEFAULT_GROUP,
            "config": config,
            "inputs": inputs or [],
            "outputs": outputs or [],
            "options": options or {},
        }
        checked = software_config.SoftwareConfig.validate_properties(
            values, "software_config"
        )
        checked.update(id=str(uuid.uuid4()), tenant=ctxt.project_id, name=name)
        return view(db_configs.software_config_create(checked))

    @expected
    def list_software_configs(self, ctxt, limit=None, marker=None):
        return [
            view(c, detail=False)
            for c in db_configs.software_config_get_all(
                ctxt.project_id, limit=limit, marker=marker
            )
        ]

    @expected
    def show_software_config(self, ctxt, config_id):
        return view(db_configs.software_config_get(config_id, ctxt.project_id))

    @expected
    def delete_software_config(self, ctxt, config_id):
        db_configs.software_config_delete(config_id, ctxt.project_id)
