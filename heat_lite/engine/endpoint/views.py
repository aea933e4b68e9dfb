"""Stack, resource and event dicts in Heat's engine format.

The API adds links (it alone knows the request URL); everything else a
client sees is shaped here, from database rows.
"""

import json

from heat_lite.common import states


def timestamp(value):
    """Heat's time format: second precision, UTC, or None."""
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def identity(stack, path=""):
    return {
        "tenant": stack["tenant"],
        "stack_name": stack["name"],
        "stack_id": stack["id"],
        "path": path,
    }


def stack_summary(stack):
    """The fields of a stack in a list."""
    tags = json.loads(stack["tags"]) if stack["tags"] else None
    return {
        "id": stack["id"],
        "stack_identity": identity(stack),
        "stack_name": stack["name"],
        "description": "",
        "stack_status": states.joined(stack["action"], stack["status"]),
        "stack_status_reason": stack["status_reason"] or "",
        "creation_time": timestamp(stack["created_at"]),
        "updated_time": timestamp(stack["updated_at"]),
        "deletion_time": timestamp(stack["deleted_at"]),
        "stack_owner": stack["username"],
        "parent": stack["owner_id"],
        "stack_user_project_id": stack["tenant"],
        "tags": tags,
        "project": stack["tenant"],
    }


def stack_detail(stack, bound, outputs=None):
    """The fields of ``stack show``."""
    result = stack_summary(stack)
    result.update(
        {
            "description": bound.description if bound else "",
            "template_description": bound.description if bound else "",
            "parameters": bound.parameters_display() if bound else {},
            "disable_rollback": bool(stack["disable_rollback"]),
            "timeout_mins": stack["timeout"],
            "capabilities": [],
            "notification_topics": [],
            # heat_lite's own (heatclient shows what it knows).
            "update_semantics": stack.get("update_semantics") or "converge",
        }
    )
    if outputs is not None:
        result["outputs"] = outputs
    return result


def resource(record, stack, required_by=(), detail=False):
    """A resource as ``resource list`` shows it."""
    result = {
        "resource_name": record["name"],
        "logical_resource_id": record["name"],
        "physical_resource_id": record["physical_resource_id"] or "",
        "resource_type": record["type"],
        "resource_status": states.joined(record["action"], record["status"]),
        "resource_status_reason": record["status_reason"] or "",
        "creation_time": timestamp(record["created_at"]),
        "updated_time": timestamp(
            record["updated_at"] or record["created_at"]
        ),
        "required_by": sorted(required_by),
        "resource_identity": identity(stack, "/resources/%s" % record["name"]),
        "stack_identity": identity(stack),
        "stack_name": stack["name"],
    }
    if detail:
        result["description"] = ""
        result["attributes"] = json.loads(record["attr_data"] or "{}")
    return result


def record_version(record):
    """One version of a resource (our ``/versions`` extension)."""
    return {
        "id": record["uuid"],
        "version": record["version"],
        "role": record["role"],
        "physical_resource_id": record["physical_resource_id"] or "",
        "resource_type": record["type"],
        "resource_status": states.joined(record["action"], record["status"]),
        "resource_status_reason": record["status_reason"] or "",
        "template_id": record["template_id"],
        "properties": json.loads(record["properties_data"] or "{}"),
        "replaces": record["replaces"],
        "replaced_by": record["replaced_by"],
        "creation_time": timestamp(record["created_at"]),
        "updated_time": timestamp(record["updated_at"]),
    }


def event(row, stack):
    """An event as ``event list`` shows it."""
    name = row["resource_name"]
    return {
        "id": row["uuid"],
        "event_identity": identity(
            stack, "/resources/%s/events/%s" % (name, row["uuid"])
        ),
        "resource_name": name,
        "logical_resource_id": name,
        "physical_resource_id": row["physical_resource_id"] or "",
        "resource_action": row["resource_action"],
        "resource_status": states.joined(
            row["resource_action"], row["resource_status"]
        ),
        "resource_status_reason": row["resource_status_reason"] or "",
        "resource_type": row["resource_type"],
        "resource_properties": json.loads(row["resource_properties"] or "{}"),
        "event_time": timestamp(row["created_at"]),
        "stack_identity": identity(stack),
    }


def engine_resource(record, stack, required_by=(), detail=False):
    """A resource in Heat's engine format (previews): action and status
    apart, identities kept, no links."""
    result = resource(record, stack, required_by, detail)
    result["resource_action"] = record["action"]
    result["resource_status"] = record["status"]
    return result


def stack_preview(stack, bound, resources):
    """The stack a create would make (``POST /stacks/preview``)."""
    result = stack_detail(stack, bound)
    for key in (
        "stack_status",
        "stack_status_reason",
        "deletion_time",
        "updated_time",
        "creation_time",
    ):
        result.pop(key, None)
    result["id"] = "None"
    result["resources"] = resources
    return result


def service(svc, up):
    """An engine service (``GET /services``)."""
    return {
        "id": svc["engine_id"],
        "engine_id": svc["engine_id"],
        "host": svc["host"],
        "hostname": svc["hostname"],
        "binary": svc["binary"],
        "topic": svc["topic"],
        "report_interval": svc["report_interval"],
        "status": "up" if up else "down",
        "created_at": timestamp(svc["created_at"]),
        "updated_at": timestamp(svc["updated_at"]),
        "deleted_at": None,
    }


def provenance(row):
    """What ``stack show`` says the stack was promoted from (None)."""
    if row is None:
        return None
    return {
        "promotion_id": row["id"],
        "stack_id": row["source_stack_id"],
        "stack_name": row["source_stack_name"],
        "project": row["tenant"],
        "template_id": row["source_template_id"],
        "template_sha256": row["source_template_sha256"],
        "promoted_at": timestamp(row["finished_at"]),
    }
