"""The OpenAPI 3 document of the v1 API (``GET /v1/openapi.json``).

Built from the controller tree (paths, methods, path parameters), the
handlers' policy rules, docstrings and declared query parameters
(``request.query``, the only ones a handler can read), and ``schemas``
(bodies), so it cannot drift from what is routed. The lookup routes are
documented by their plain ``{name}`` form and each sub-path (GET); the
ARN form is not.
"""

import collections
import re

from heat_lite import version
from heat_lite.api import origin, request, schemas, schemas_apps, schemas_fleet
from heat_lite.api.controllers import base, root
from heat_lite.api.controllers.v1 import changes

_PARAM_RE = re.compile(r"{(\w+)}")
RESPONSES = {
    **schemas.RESPONSES,
    **schemas_fleet.RESPONSES,
    **schemas_apps.RESPONSES,
    **changes.RESPONSES,
}
REQUESTS = {
    **schemas.REQUESTS,
    **schemas_fleet.REQUESTS,
    **schemas_apps.REQUESTS,
}
_ERRORS = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden by policy or project",
    404: "Not found",
    409: "Conflict",
    413: "Request too large",
    503: "Engine unavailable",
}


def _operation(method, path, handler, operation_id):
    name = handler.__name__
    status, schema = RESPONSES[name]
    success = {
        "description": (handler.__doc__ or name).strip().splitlines()[0]
    }
    if schema is not None:
        success["content"] = {"application/json": {"schema": schema}}
    if status == 302:
        success["headers"] = {"Location": {"schema": schemas.STRING}}
    responses = {str(status): success}
    if name in schemas_apps.OTHER_RESPONSES:
        code, schema = schemas_apps.OTHER_RESPONSES[name]
        responses[str(code)] = {
            "description": success["description"],
            "content": {"application/json": {"schema": schema}},
        }
    errors = {**_ERRORS, **schemas_apps.OTHER_ERRORS.get(name, {})}
    for code, text in sorted(errors.items()):
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
        for p, s in getattr(handler, "query_params", {}).items()
    ]
    op = {
        "operationId": operation_id,
        "summary": success["description"],
        "parameters": params,
        "responses": responses,
    }
    if handler.policy_rule is request.NO_TOKEN:
        # The request carries its own credential (a webhook's signature).
        op["security"] = []
        del responses["403"]
    else:
        op["x-policy-rule"] = handler.policy_rule
    if name == "webhook":
        op["requestBody"] = {
            "required": True,
            "content": {
                t: {"schema": schemas.ANY_OBJECT} for t in origin.WEBHOOK_TYPES
            },
        }
    elif name in REQUESTS:
        op["requestBody"] = {
            "required": name not in ("signal", "validate"),
            "content": {"application/json": {"schema": REQUESTS[name]}},
        }
    return op


def _paths():
    """{OpenAPI path: {method: handler}} from the controller tree."""
    result = {}
    for path, cls in base.walk(root.RootController):
        found = base.handlers(cls)
        if cls._rest:
            found = {"GET": found["GET"]}
        if found:
            result[path] = found
    return result


def _operation_ids(paths):
    """{(path, method): operationId}: ``<handler>_<method>``, with the
    path appended where one handler serves a method on several paths
    (the lookup redirects, the snapshot routes)."""
    uses = collections.Counter(
        (handler.__name__, method)
        for handlers in paths.values()
        for method, handler in handlers.items()
    )
    ids = {}
    for path, handlers in paths.items():
        for method, handler in handlers.items():
            key = "%s_%s" % (handler.__name__, method.lower())
            if uses[(handler.__name__, method)] > 1:
                tail = path.split("/stacks/", 1)[-1]
                key += "_" + re.sub(r"\W+", "_", tail).strip("_")
            ids[(path, method)] = key
    return ids


def build():
    """The OpenAPI 3.0 document as a dict."""
    paths = {}
    routes = _paths()
    ids = _operation_ids(routes)
    for path, handlers in routes.items():
        paths[path] = {
            method.lower(): _operation(
                method, path, handler, ids[(path, method)]
            )
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
