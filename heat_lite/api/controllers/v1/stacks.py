"""Handlers of /v1/{tenant}/stacks and of one stack."""

from heat_lite.api import views
from heat_lite.api.request import Reply
from heat_lite.common import exception

_CREATE_KEYS = ("stack_name", "template", "template_url", "parameters",
                "environment", "environment_files", "files",
                "files_container", "timeout_mins", "disable_rollback",
                "tags", "adopt_stack_data")
_UPDATE_KEYS = _CREATE_KEYS + ("clear_parameters", "converge", "existing")


def _template(body, required=True):
    if body.get("template") is None and body.get("template_url"):
        raise exception.NotSupported(feature="template_url")
    template = body.get("template")
    if template is None and required:
        raise exception.BadRequest(message="No template specified")
    return template


def _args(body):
    """Stack options of a create or update body, checked."""
    args = {}
    if body.get("timeout_mins") is not None:
        try:
            timeout = int(body["timeout_mins"])
        except (TypeError, ValueError):
            raise exception.Invalid(
                message="Invalid timeout value %s" % body["timeout_mins"]
            ) from None
        if timeout < 0:
            raise exception.Invalid(
                message="Invalid timeout value %s" % body["timeout_mins"])
        args["timeout_mins"] = timeout or None
    if body.get("disable_rollback") is not None:
        value = body["disable_rollback"]
        if isinstance(value, str):
            if value.lower() not in ("true", "false"):
                raise exception.Invalid(
                    message="disable_rollback must be a boolean")
            value = value.lower() == "true"
        args["disable_rollback"] = bool(value)
    if "tags" in body:
        tags = body["tags"]
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",") if t.strip()]
        if tags is not None and (not isinstance(tags, list) or any(
                not isinstance(t, str) or len(t) > 80 for t in tags)):
            raise exception.Invalid(message="Invalid tags")
        args["tags"] = tags or None
    if body.get("clear_parameters") is not None:
        args["clear_parameters"] = list(body["clear_parameters"])
    return args


def _check_keys(body, allowed):
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise exception.Invalid(message="Unknown attribute: %s" %
                                ", ".join(unknown))


def list_stacks(req, tenant):
    filters = {}
    for key, column in (("name", "name"), ("stack_name", "name"),
                        ("id", "id")):
        values = req.params.getall(key)
        if values:
            filters[column] = values
    stacks = req.engine.list_stacks(
        req.context, limit=req.int_param("limit"),
        marker=req.params.get("marker"),
        sort_keys=req.params.getall("sort_keys"),
        sort_dir=req.params.get("sort_dir"),
        show_deleted=req.bool_param("show_deleted"),
        show_nested=req.bool_param("show_nested"), filters=filters)
    items = [views.stack(req.app_url, s) for s in stacks]
    if not req.context.is_admin:
        for item in items:
            item.pop("project", None)
    return Reply(200, {"stacks": items})


def create_stack(req, tenant):
    body = req.body()
    _check_keys(body, _CREATE_KEYS)
    if not body.get("stack_name"):
        raise exception.BadRequest(message="No stack name specified")
    if body.get("adopt_stack_data"):
        raise exception.NotSupported(feature="Stack Adopt")
    ident = req.engine.create_stack(
        req.context, body["stack_name"], _template(body),
        body.get("parameters") or {}, body.get("files") or {},
        body.get("environment"), body.get("environment_files"),
        _args(body))
    url = views.stack_url(req.app_url, ident)
    return Reply(201, {"stack": {"id": ident["stack_id"], "links": [
        {"href": url, "rel": "self"}]}}, {"Location": url})


def lookup(req, tenant, name, sub=None):
    """302 from a name (or id) to the canonical stack URL."""
    ident = req.engine.identify_stack(req.context, name)
    location = views.stack_url(req.app_url, ident)
    if sub:
        location += "/" + sub
    if req.raw.query_string:
        location += "?" + req.raw.query_string
    return Reply(302, None, {"Location": location})


def _identity(tenant, name, stack_id):
    return {"tenant": tenant, "stack_name": name, "stack_id": stack_id,
            "path": ""}


def show_stack(req, tenant, name, stack_id):
    stack = req.engine.show_stack(
        req.context, _identity(tenant, name, stack_id),
        resolve_outputs=req.bool_param("resolve_outputs", True))
    if not req.context.is_admin:
        stack.pop("project", None)
    return Reply(200, {"stack": views.stack(req.app_url, stack)})


def _update(req, tenant, name, stack_id, existing):
    body = req.body()
    _check_keys(body, _UPDATE_KEYS)
    req.engine.update_stack(
        req.context, _identity(tenant, name, stack_id),
        _template(body, required=not existing), body.get("parameters") or {},
        body.get("files") or {}, body.get("environment"),
        body.get("environment_files"), _args(body), existing=existing)
    return Reply(202, None)


def update_stack(req, tenant, name, stack_id):
    return _update(req, tenant, name, stack_id, existing=False)


def patch_stack(req, tenant, name, stack_id):
    return _update(req, tenant, name, stack_id, existing=True)


def delete_stack(req, tenant, name, stack_id):
    req.engine.delete_stack(req.context, _identity(tenant, name, stack_id))
    return Reply(204)


_ACTIONS = ("suspend", "resume", "check", "cancel_update",
            "cancel_without_rollback")


def stack_action(req, tenant, name, stack_id):
    body = req.body()
    if len(body) != 1:
        raise exception.BadRequest(message="Multiple actions specified"
                                   if body else "No action specified")
    action = next(iter(body))
    if action not in _ACTIONS:
        raise exception.BadRequest(message="Invalid action %s specified" %
                                   action)
    ident = _identity(tenant, name, stack_id)
    if action in ("cancel_update", "cancel_without_rollback"):
        req.engine.stack_cancel_update(
            req.context, ident,
            cancel_with_rollback=action == "cancel_update")
    else:
        req.engine.stack_action(req.context, ident, action.upper())
    return Reply(200, None)
