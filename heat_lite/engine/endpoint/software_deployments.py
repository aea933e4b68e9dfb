"""The software-deployment part of the engine endpoint
(``/software_deployments``).

A deployment applies one of the project's configs to a server. The API
records what it is given, as Heat does: an agent (or a client) reports
a deployment's progress by updating its ``action``, ``status`` and
``output_values``. ``metadata_software_deployments`` is what a server's
agent reads: the configs of its deployments, ordered by config name.
"""

import datetime
import uuid

from heat_lite.common import exception
from heat_lite.db import software_deployments as db_deployments
from heat_lite.engine.endpoint import software_configs
from heat_lite.engine.endpoint.base import TARGET, expected

# Longest values the columns keep.
_LIMITS = {
    "server_id": 255,
    "action": 255,
    "status": 255,
    "stack_user_project_id": 64,
}


def view(deployment):
    """A deployment in Heat's engine format."""
    result = {
        "id": deployment["id"],
        "server_id": deployment["server_id"],
        "config_id": deployment["config_id"],
        "input_values": deployment["input_values"],
        "output_values": deployment["output_values"],
        "action": deployment["action"],
        "status": deployment["status"],
        "status_reason": deployment["status_reason"],
        "creation_time": deployment["created_at"].isoformat(),
    }
    if deployment["updated_at"]:
        result["updated_time"] = deployment["updated_at"].isoformat()
    return result


def _check(values):
    """Refuse values of the wrong type or too long (400), as the
    columns would; ``status_reason`` is kept as text, as Heat keeps it."""
    for key, value in values.items():
        if value is None:
            continue
        if key in ("input_values", "output_values"):
            if not isinstance(value, dict):
                raise exception.Invalid(message="%s must be a map" % key)
        elif key == "status_reason":
            values[key] = str(value)
        elif not isinstance(value, str):
            raise exception.Invalid(message="%s must be a string" % key)
        elif key in _LIMITS and len(value) > _LIMITS[key]:
            raise exception.Invalid(
                message='"%s" should be no more than %d characters'
                % (key, _LIMITS[key])
            )
    return values


class SoftwareDeploymentEndpoint:
    """Create, list, show, update and delete software deployments, and
    a server's deployment metadata."""

    target = TARGET

    @expected
    def create_software_deployment(
        self,
        ctxt,
        server_id,
        config_id,
        input_values=None,
        action=None,
        status=None,
        status_reason=None,
        stack_user_project_id=None,
    ):
        for key, value in (("server_id", server_id), ("config_id", config_id)):
            if not value:
                raise exception.Invalid(message="%s is required" % key)
        values = _check(
            {
                "server_id": server_id,
                "config_id": config_id,
                "input_values": input_values or {},
                "action": action,
                "status": status,
                "status_reason": status_reason,
                "stack_user_project_id": stack_user_project_id,
            }
        )
        values.update(id=str(uuid.uuid4()), tenant=ctxt.project_id)
        return view(db_deployments.software_deployment_create(values))

    @expected
    def list_software_deployments(self, ctxt, server_id=None):
        return [
            view(d)
            for d in db_deployments.software_deployment_get_all(
                ctxt.project_id, server_id=server_id
            )
        ]

    @expected
    def show_software_deployment(self, ctxt, deployment_id):
        return view(
            db_deployments.software_deployment_get(
                deployment_id, ctxt.project_id
            )
        )

    @expected
    def metadata_software_deployments(self, ctxt, server_id):
        if not server_id:
            raise exception.Invalid(message="server_id must be specified")
        return [
            software_configs.view(c, detail=True, project=False)
            for c in db_deployments.software_deployment_configs(
                ctxt.project_id, server_id
            )
        ]

    @expected
    def update_software_deployment(
        self,
        ctxt,
        deployment_id,
        config_id=None,
        input_values=None,
        output_values=None,
        action=None,
        status=None,
        status_reason=None,
    ):
        """Record what is given (a key left out, or empty, is kept);
        ``updated_time`` is now."""
        given = {
            "config_id": config_id,
            "input_values": input_values,
            "output_values": output_values,
            "action": action,
            "status": status,
            "status_reason": status_reason,
        }
        values = _check({k: v for k, v in given.items() if v})
        values["updated_at"] = datetime.datetime.now(datetime.UTC).replace(
            tzinfo=None
        )
        return view(
            db_deployments.software_deployment_update(
                deployment_id, ctxt.project_id, values
            )
        )

    @expected
    def delete_software_deployment(self, ctxt, deployment_id):
        db_deployments.software_deployment_delete(
            deployment_id, ctxt.project_id
        )
