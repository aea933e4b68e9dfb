"""Handlers of /v1/{tenant}/stacks: list, create, preview and the lookup
that redirects a name, an id or an ARN to the canonical stack URL."""

from urllib import parse

from heat_lite.api import identities, schemas, views
from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

# Exact-match filters of the stack list (public names).
LIST_FILTERS = (
    "id",
    "status",
    "name",
    "action",
    "tenant",
    "username",
    "owner_id",
    "stack_name",
    "stack_status",
    "stack_status_reason",
    "disable_rollback",
    "timeout_mins",
    "stack_owner",
    "parent",
    "stack_user_project_id",
)
TAG_FILTERS = ("tags", "tags_any", "not_tags", "not_tags_any")
_LIST_QUERY = dict(
    schemas.Q_PAGE,
    sort_keys=schemas.STRING,
    sort_dir=schemas.Q_SORT_DIR,
    with_count=schemas.Q_BOOL,
    **{
        k: schemas.Q_BOOL
        for k in (
            "show_deleted",
            "show_nested",
            "show_hidden",
            "global_tenant",
        )
    },
    **{k: schemas.STRING for k in LIST_FILTERS + TAG_FILTERS},
)


def _list_params(req):
    params = {
        "limit": req.int_param("limit"),
        "marker": req.params.get("marker"),
        "sort_keys": req.list_param("sort_keys"),
        "sort_dir": req.sort_dir(),
        "show_deleted": req.bool_param("show_deleted"),
        "show_nested": req.bool_param("show_nested"),
        "show_hidden": req.bool_param("show_hidden"),
        "global_tenant": req.bool_param("global_tenant"),
    }
    filters = {}
    for key in LIST_FILTERS:
        values = req.params.getall(key)
        if values:
            filters[key] = values
    params["filters"] = filters
    for key in TAG_FILTERS:
        values = req.list_param(key)
        if values:
            params[key] = values
    return params


def _next_link(req, stacks):
    query = [(k, v) for k, v in req.params.items() if k != "marker"]
    query.append(("marker", stacks[-1]["id"]))
    return {
        "rel": "next",
        "href": "%s%s?%s"
        % (req.app_url, req.raw.path_info, parse.urlencode(query)),
    }


@rule("stacks:index")
@query(**_LIST_QUERY)
def list_stacks(req, tenant):
    """List the project's stacks (filters, paging, sorting, tags)."""
    params = _list_params(req)
    if params["global_tenant"]:
        req.authorize("stacks:global_index", tenant)
    stacks = req.engine.list_stacks(req.context, **params)
    items = [views.stack(req.app_url, s) for s in stacks]
    if not req.context.is_admin:
        for item in items:
            item.pop("project", None)
    body = {"stacks": items}
    if params["limit"] and len(items) == params["limit"]:
        body["links"] = [_next_link(req, items)]
    if req.bool_param("with_count"):
        count_params = {
            k: v
            for k, v in params.items()
            if k not in ("limit", "marker", "sort_keys", "sort_dir")
        }
        body["count"] = req.engine.count_stacks(req.context, **count_params)
    return Reply(200, body)


@rule("stacks:detail")
@query(**_LIST_QUERY)
def list_stacks_detail(req, tenant):
    """List the project's stacks, as ``GET /stacks`` does."""
    return list_stacks(req, tenant)


def _create_request(req):
    body = req.body()
    stack_body.check_keys(body, stack_body.CREATE_KEYS)
    name = body.get("stack_name")
    if not name:
        raise exception.BadRequest(message="No stack name specified")
    if not isinstance(name, str):
        raise exception.Invalid(message="stack_name must be a string")
    args = stack_body.args(body)
    adopt = stack_body.adopt_data(body)
    template = None
    if adopt is not None:
        args["adopt_stack_data"] = adopt
        # Heat takes the template from the adopt data unless one is given.
        template = stack_body.template(
            body, required=False
        ) or stack_body.template(adopt)
    params, files, environment, env_files = stack_body.sources(body)
    return (
        name,
        template or stack_body.template(body),
        params,
        files,
        environment,
        env_files,
        args,
    )


@rule("stacks:create")
def create_stack(req, tenant):
    """Create a stack, or adopt one from ``adopt_stack_data``."""
    ident = req.engine.create_stack(req.context, *_create_request(req))
    url = views.stack_url(req.app_url, ident)
    return Reply(
        201,
        {
            "stack": {
                "id": ident["stack_id"],
                "links": [{"href": url, "rel": "self"}],
            }
        },
        {"Location": url},
    )


@rule("stacks:preview")
def preview_stack(req, tenant):
    """Show the stack a template would make, creating nothing."""
    stack = views.stack(
        req.app_url,
        req.engine.preview_stack(req.context, *_create_request(req)),
    )
    if not req.context.is_admin:
        stack.pop("project", None)
    return Reply(200, {"stack": stack})


def _redirect(req, ident, sub=None):
    location = views.stack_url(req.app_url, ident)
    if sub:
        location += "/" + parse.quote(sub, safe="/")
    if req.raw.query_string:
        location += "?" + req.raw.query_string
    return Reply(302, None, {"Location": location})


# The API process's stack identities found by ID (``api.identities``).
IDENTITIES = identities.Identities()


@rule("stacks:lookup")
def lookup(req, tenant, name, sub=None):
    """302 from a name (or id) to the canonical stack URL."""
    ident = IDENTITIES.identify(req.engine, req.context, name)
    return _redirect(req, ident, sub)


@rule("stacks:lookup")
def lookup_arn(req, tenant, arn_tenant, name, stack_id, sub=None):
    """302 from ``arn:openstack:heat::<tenant>:stacks/<name>/<id>``."""
    if arn_tenant != tenant:
        raise exception.StackNotFound(name=name)
    ident = IDENTITIES.identify(req.engine, req.context, stack_id)
    if ident["stack_name"] != name:
        raise exception.StackNotFound(name=name)
    return _redirect(req, ident, sub.lstrip("/") if sub else None)
