"""The OpenAPI 3 document of the v1 API (``GET /v1/openapi.json``).

Built from the route table (paths, methods, path parameters), the
handlers' policy rules and docstrings, and ``schemas`` (bodies), so it
cannot drift from what is routed. Lookup routes matched by regular
expressions (ARNs, ``{name}/<sub-path>``) are documented by their plain
``{name}`` form and each sub-path.
"""

import re

from heat_lite import version
from heat_lite.api import schemas
from heat_lite.api.controllers import v1

_PARAM_RE = re.compile(r"{(\w+)}")
_ERRORS = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden by policy or project",
    404: "Not found",
    409: "Conflict",
    413: "Request too large",
    503: "Engine unavailable",
}
_BOOL = {"type": "string", "enum": ["true", "false", "True", "False"]}
_QUERY = {
    "list_stacks": {
        "limit": {"type": "integer", "minimum": 0},
        "marker": schemas.STRING,
        "sort_keys": schemas.STRING,
        "sort_dir": {"type": "string", "enum": ["asc", "desc"]},
        "show_deleted": _BOOL,
        "show_nested": _BOOL,
        "show_hidden": _BOOL,
        "global_tenant": _BOOL,
        "with_count": _BOOL,
        "tags": schemas.STRING,
        "tags_any": schemas.STRING,
        "not_tags": schemas.STRING,
        "not_tags_any": schemas.STRING,
        "stack_name": schemas.STRING,
        "status": schemas.STRING,
    },
    "show_stack": {"resolve_outputs": _BOOL},
    "list_resources": {
        "nested_depth": {"type": "integer", "minimum": 0},
        "with_detail": _BOOL,
        "name": schemas.STRING,
        "status": schemas.STRING,
        "type": schemas.STRING,
    },
    "show_resource": {"with_attr": schemas.STRING},
    "list_events": {
        "limit": {"type": "integer", "minimum": 0},
        "marker": schemas.STRING,
        "sort_dir": {"type": "string", "enum": ["asc", "desc"]},
        "sort_keys": {
            "type": "string",
            "enum": ["event_time", "resource_type"],
        },
        "nested_depth": {"type": "integer", "minimum": 0},
        "resource_status": schemas.STRING,
        "resource_action": schemas.STRING,
        "resource_name": schemas.STRING,
        "resource_type": schemas.STRING,
    },
    "list_resource_types": {
        "name": schemas.STRING,
        "support_status": schemas.STRING,
        "with_description": _BOOL,
    },
    "generate_template": {
        "template_type": {"type": "string", "enum": ["cfn", "hot"]}
    },
    "preview_update": {"show_nested": _BOOL},
    "validate": {"show_nested": _BOOL},
    "list_software_configs": {
        "limit": {"type": "integer", "minimum": 0},
        "marker": schemas.STRING,
    },
}
_QUERY["list_stacks_detail"] = _QUERY["list_stacks"]
_QUERY["list_resource_events"] = _QUERY["list_events"]
_QUERY["preview_update_patch"] = _QUERY["preview_update"]


def _operation(method, path, handler):
    name = handler.__name__
    status, schema = schemas.RESPONSES[name]
    success = {
        "description": (handler.__doc__ or name).strip().splitlines()[0]
    }
    if schema is not None:
        success["content"] = {"application/json": {"schema": schema}}
    if status == 302:
        success["headers"] = {"Location": {"schema": schemas.STRING}}
    responses = {str(status): success}
    for code, text in _ERRORS.items():
        responses[str(code)] = {
            "description": text,
            "content": {"application/json": {"schema": schemas.ERROR}},
        }
    params = [
        {
            "name": p,
            "in": "path",
            "required": True,
            "schema": {"type": "string", "minLength": 1},
        }
        for p in _PARAM_RE.findall(path)
    ]
    params += [
        {"name": p, "in": "query", "required": False, "schema": s}
        for p, s in _QUERY.get(name, {}).items()
    ]
    op = {
        "operationId": "%s_%s" % (name, method.lower()),
        "summary": success["description"],
        "parameters": params,
        "responses": responses,
        "x-policy-rule": handler.policy_rule,
    }
    if name in schemas.REQUESTS:
        op["requestBody"] = {
            "required": name not in ("signal", "validate"),
            "content": {
                "application/json": {"schema": schemas.REQUESTS[name]}
            },
        }
    return op


def _paths():
    """{OpenAPI path: {method: handler}} from the route table."""
    result = {}
    for pattern, handlers in v1.build().routes():
        if "(?P<sub>" in pattern and "arn:" not in pattern:
            base = pattern.split("/(?P<sub>")[0]
            for sub in v1.LOOKUP_SUBS:
                result[base + "/" + sub] = {"GET": handlers["GET"]}
            continue
        if "(?P" in pattern:
            continue
        result[pattern] = handlers
    return result


def build():
    """The OpenAPI 3.0 document as a dict."""
    paths = {}
    for path, handlers in _paths().items():
        paths[path] = {
            method.lower(): _operation(method, path, handler)
            for method, handler in sorted(handlers.items())
        }
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "heat_lite Orchestration API v1",
            "version": version.version_string(),
            "description": "OpenStack Heat's Orchestration API v1 as "
            "heat_lite serves it.",
        },
        "paths": paths,
        "components": {"schemas": {"Error": schemas.ERROR}},
    }
