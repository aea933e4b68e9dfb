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
from heat_lite.db import software_configs as db_configs
from heat_lite.db import software_deployments as db_deployments
from heat_lite.engine.endpoint import software_configs
from heat_lite.engine.endpoint.base import TARGET, expected

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
# Output values every signal sets.
STANDARD_OUTPUTS = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
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


def server_deployments(tenant, server_id):
    """The ``deployments`` a server's metadata carries for its agent."""
    return [
        software_configs.view(c, detail=True, project=False)
        for c in db_deployments.software_deployment_configs(tenant, server_id)
    ]


def _outcome(deployment_id, details, outputs):
    """(status, reason, event reason) of a deployment's signal, as Heat
    decides them: a non-zero ``deploy_status_code`` or a value for an
    ``error_output`` fails it."""
    failures = {}
    code = details.get("deploy_status_code")
    if code and str(code) != "0":
        failures["deploy_status_code"] = (
            "Deployment exited with non-zero status code: %s" % code
        )
    for output in outputs:
        name = output.get("name")
        if output.get("error_output") and name in details:
            failures[name] = details[name]
    if failures:
        reason = ", ".join("%s : %s" % (k, v) for k, v in failures.items())
        return FAILED, reason, "deployment %s failed" % deployment_id
    return (
        COMPLETE,
        "Outputs received",
        ("deployment %s succeeded" % deployment_id),
    )


def signal_deployment(tenant, deployment_id, details):
    """Record an agent's signal on an IN_PROGRESS deployment: its output
    values (the config's outputs and the ``deploy_*`` ones), COMPLETE or
    FAILED. A deployment not IN_PROGRESS is left as it is.

    :returns: what happened, for the resource's SIGNAL event.
    :raises NotFound: if ``tenant`` sees no such deployment.
    :raises Invalid: if ``details`` is not a map.
    """
    if details is None:
        details = {}
    if not isinstance(details, dict):
        raise exception.Invalid(message="A deployment signal must be a map")
    deployment = db_deployments.software_deployment_get(deployment_id, tenant)
    if deployment["status"] != IN_PROGRESS:
        return "deployment %s is not in progress" % deployment_id
    try:
        outputs = db_configs.software_config_get(
            deployment["config_id"], deployment["tenant"]
        )["outputs"]
    except exception.NotFound:
        outputs = []
    values = dict(deployment["output_values"] or {})
    for output in outputs or []:
        if output.get("name") in details:
            values[output["name"]] = details[output["name"]]
    for key in STANDARD_OUTPUTS:
        values[key] = details.get(key)
    status, reason, event = _outcome(deployment_id, details, outputs or [])
    db_deployments.software_deployment_update(
        deployment_id,
        tenant,
        {
            "output_values": values,
            "status": status,
            "status_reason": reason,
            "updated_at": _now(),
        },
    )
    return event


def _now():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


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
        return server_deployments(ctxt.project_id, server_id)

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
        values["updated_at"] = _now()
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
