"""The controller tree through pecan, without a server or an engine:
every URL reaches the handler it did with the regex router (and the
OpenAPI document says), with the path parameters it names; unknown URLs
get Heat's JSON 404, a wrong method the JSON 405 with ``Allow``.

Requests carry a context of another project with no roles: policy
refuses every rule, so routing is seen whole (``base.ROUTE_KEY``) and the
engine is never reached.
"""

import json
import re

import pytest
import webob

from heat_lite import conf
from heat_lite.api import app, auth, faults, openapi, request
from heat_lite.api.controllers import base
from heat_lite.common import context, policy

CONF = conf.CONF
ARN = "arn:openstack:heat::p:stacks"
# "METHOD path handler" under /v1/p, as the regex router routed them.
ROUTED = [
    "GET /stacks list_stacks",
    "POST /stacks create_stack",
    "GET /stacks/ list_stacks",
    "GET /stacks/detail list_stacks_detail",
    "POST /stacks/preview preview_stack",
    "POST /stacks/query query_stacks",
    "GET /stacks/n lookup",
    "POST /stacks/n lookup",
    "PUT /stacks/n lookup",
    "PATCH /stacks/n lookup",
    "DELETE /stacks/n lookup",
    "GET /stacks/n/ lookup",
    "GET /stacks/detail/x show_stack",
    "PUT /stacks/detail/x update_stack",
    "PATCH /stacks/detail/x patch_stack",
    "DELETE /stacks/detail/x delete_stack",
    "GET /stacks/preview/x show_stack",
    "PUT /stacks/preview/x update_stack",
    "PATCH /stacks/preview/x patch_stack",
    "DELETE /stacks/preview/x delete_stack",
    "GET /stacks/query/x show_stack",
    "PUT /stacks/query/x update_stack",
    "PATCH /stacks/query/x patch_stack",
    "DELETE /stacks/query/x delete_stack",
    "GET /stacks/n/resources lookup",
    "GET /stacks/n/resources/r/events lookup",
    "GET /stacks/n/events lookup",
    "GET /stacks/n/template lookup",
    "GET /stacks/n/actions lookup",
    "GET /stacks/n/drift lookup",
    "GET /stacks/n/environment lookup",
    "GET /stacks/n/files lookup",
    "GET /stacks/n/outputs lookup",
    "GET /stacks/n/outputs/k lookup",
    "GET /stacks/n/snapshots lookup",
    "GET /stacks/n/snapshots/s lookup",
    "GET /stacks/n/export lookup",
    "GET /stacks/n/abandon lookup",
    "GET /stacks/n/preview lookup",
    "GET /stacks/n/verdict lookup",
    "GET /stacks/n/promotions lookup",
    "GET /stacks/n/traversals lookup",
    "GET /stacks/n/plans lookup",
    "GET /stacks/n/i show_stack",
    "PUT /stacks/n/i update_stack",
    "PATCH /stacks/n/i patch_stack",
    "DELETE /stacks/n/i delete_stack",
    "GET /stacks/n/i/ show_stack",
    "PUT /stacks/n/i/preview preview_update",
    "PATCH /stacks/n/i/preview preview_update_patch",
    "DELETE /stacks/n/i/abandon abandon_stack",
    "GET /stacks/n/i/export export_stack",
    "GET /stacks/n/i/template get_template",
    "GET /stacks/n/i/environment get_environment",
    "GET /stacks/n/i/files get_files",
    "GET /stacks/n/i/outputs list_outputs",
    "GET /stacks/n/i/outputs/k show_output",
    "POST /stacks/n/i/actions stack_action",
    "POST /stacks/n/i/verdict verdict",
    "GET /stacks/n/i/drift show_drift",
    "GET /stacks/n/i/traversals list_traversals",
    "DELETE /stacks/n/i/traversals/t cancel_traversal",
    "GET /stacks/n/i/plans list_plans",
    "POST /stacks/n/i/plans create_plan",
    "GET /stacks/n/i/plans/x show_plan",
    "DELETE /stacks/n/i/plans/x delete_plan",
    "POST /stacks/n/i/plans/x/apply apply_plan",
    "GET /stacks/n/i/promotions stack_promotions",
    "GET /stacks/n/i/snapshots snapshot_list",
    "POST /stacks/n/i/snapshots snapshot_create",
    "GET /stacks/n/i/snapshots/s snapshot_show",
    "DELETE /stacks/n/i/snapshots/s snapshot_delete",
    "POST /stacks/n/i/snapshots/s/restore snapshot_restore",
    "GET /stacks/n/i/resources list_resources",
    "GET /stacks/n/i/resources/ list_resources",
    "GET /stacks/n/i/resources/r show_resource",
    "PATCH /stacks/n/i/resources/r mark_unhealthy",
    "GET /stacks/n/i/resources/r/ show_resource",
    "GET /stacks/n/i/resources/r/metadata metadata",
    "POST /stacks/n/i/resources/r/signal signal",
    "GET /stacks/n/i/resources/r/versions resource_versions",
    "GET /stacks/n/i/resources/r/events list_resource_events",
    "GET /stacks/n/i/resources/r/events/e show_event",
    "GET /stacks/n/i/events list_events",
    "POST /validate validate",
    "GET /template_versions list_versions",
    "GET /template_versions/v/functions list_functions",
    "GET /resource_types list_resource_types",
    "GET /resource_types/T resource_schema",
    "GET /resource_types/T/template generate_template",
    "GET /build_info build_info",
    "GET /services list_services",
    "GET /software_configs list_software_configs",
    "POST /software_configs create_software_config",
    "GET /software_configs/c show_software_config",
    "DELETE /software_configs/c delete_software_config",
    "GET /software_deployments list_software_deployments",
    "POST /software_deployments create_software_deployment",
    "GET /software_deployments/d show_software_deployment",
    "PUT /software_deployments/d update_software_deployment",
    "DELETE /software_deployments/d delete_software_deployment",
    "GET /software_deployments/metadata/s metadata_software_deployments",
    "GET /rollouts list_rollouts",
    "POST /rollouts create_rollout",
    "GET /rollouts/x show_rollout",
    "DELETE /rollouts/x delete_rollout",
    "POST /rollouts/x/actions rollout_action",
    "GET /promotions list_promotions",
    "POST /promotions create_promotion",
    "GET /promotions/x show_promotion",
    "POST /promotions/x/actions promotion_action",
    "GET /apps list_apps",
    "POST /apps create_app",
    "GET /apps/x show_app",
    "PATCH /apps/x update_app",
    "DELETE /apps/x delete_app",
    "POST /apps/x/webhook webhook",
    "POST /apps/x/pushes push",
    "GET /apps/x/builds list_builds",
    "GET /apps/x/builds/b show_build",
    "GET /apps/x/builds/b/log build_log",
    "POST /apps/x/builds/b/actions build_action",
    "GET /apps/x/image_events list_app_image_events",
    "GET /retention show_retention",
    "PUT /retention set_retention",
    "DELETE /retention delete_retention",
    "GET /references list_references",
    "GET /changes project_changes",
    "GET /stacks/n/i/changes stack_changes",
]


@pytest.fixture(scope="module", autouse=True)
def _conf():
    CONF([], project="heat_lite")
    policy.reset()


class _OtherProject:
    """A context of another project, no roles: every rule refuses."""

    def __init__(self, application):
        self.app = application

    def __call__(self, environ, start_response):
        environ[auth.ENV_KEY] = context.RequestContext(
            project_id="elsewhere", user_id="u", roles=[], is_admin=False
        )
        return self.app(environ, start_response)


WSGI = faults.FaultWrapper(_OtherProject(app.make_pecan_app(object())))


def _call(method, path, query=""):
    """(response, (handler, path parameters) or None); ``path`` is put
    in PATH_INFO as it is (a quoted %2F stays quoted, as WSGI servers
    leave it)."""
    environ = webob.Request.blank("/").environ
    environ.update(PATH_INFO=path, REQUEST_METHOD=method, QUERY_STRING=query)
    response = webob.Request(environ).get_response(WSGI)
    return response, environ.get(base.ROUTE_KEY), environ


def _routed(method, path, query=""):
    response, route, _environ = _call(method, path, query)
    assert route is not None, (method, path, response.status)
    handler, params = route
    if handler.policy_rule is request.NO_TOKEN:
        # No policy: a delivery without a signature is refused (401)
        # before the engine is asked.
        assert response.status_int == 401, response.body
    else:
        assert response.status_int == 403, response.body
    return handler.__name__, params


@pytest.mark.parametrize("row", ROUTED)
def test_each_url_reaches_its_handler(row):
    method, path, name = row.split()
    assert _routed(method, "/v1/p" + path)[0] == name


def test_every_documented_url_reaches_its_handler_with_its_parameters():
    count = 0
    for path, handlers in openapi._paths().items():
        names = re.findall(r"{(\w+)}", path)
        url = path
        for name in names:
            url = url.replace("{%s}" % name, name + "-x")
        expected = {name: name + "-x" for name in names}
        for method, handler in handlers.items():
            got, params = _routed(method, url)
            assert got == handler.__name__, (method, path)
            params = dict(params)
            if handler.__name__ == "lookup" and "sub" in params:
                assert params.pop("sub") == url.rsplit("/", 1)[1]
            assert params == expected, (method, path)
            count += 1
    assert count >= 75


@pytest.mark.parametrize(
    "path,params",
    [
        (
            "/stacks/n/resources/r/events",
            {"name": "n", "sub": "resources/r/events"},
        ),
        ("/stacks/n/outputs/k/", {"name": "n", "sub": "outputs/k"}),
        (
            "/stacks/%s/n/i" % ARN,
            {"arn_tenant": "p", "name": "n", "stack_id": "i", "sub": None},
        ),
        (
            "/stacks/%s/n/i/events/" % ARN,
            {
                "arn_tenant": "p",
                "name": "n",
                "stack_id": "i",
                "sub": "/events",
            },
        ),
        (
            "/stacks/%s%%2Fn%%2Fi/resources/r" % ARN,
            {
                "arn_tenant": "p",
                "name": "n",
                "stack_id": "i",
                "sub": "/resources/r",
            },
        ),
        (
            "/stacks/arn:openstack:heat::q:stacks/n/i",
            {"arn_tenant": "q", "name": "n", "stack_id": "i", "sub": None},
        ),
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_lookups_capture_the_name_id_and_sub_path(method, path, params):
    handler, got = _routed(method, "/v1/p" + path)
    assert handler == ("lookup_arn" if "arn_tenant" in params else "lookup")
    assert got == dict(params, tenant="p")


@pytest.mark.parametrize(
    "path,handler,params",
    [
        # A fixed word under /stacks is a stack's name when more follows.
        ("/stacks/detail/x", "show_stack", {"name": "detail"}),
        ("/stacks/query/x/outputs", "list_outputs", {"name": "query"}),
        ("/stacks/preview/x/", "show_stack", {"name": "preview"}),
        # Not an ARN (no id): a name and an id, as with the regex router.
        ("/stacks/%s/n" % ARN, "show_stack", {"name": ARN, "stack_id": "n"}),
    ],
)
def test_names_that_look_like_routes(path, handler, params):
    got_handler, got = _routed("GET", "/v1/p" + path)
    assert got_handler == handler
    assert got == dict({"tenant": "p", "stack_id": "x"}, **params)


def _error(response):
    assert response.content_type == "application/json"
    return json.loads(response.body)


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/v1/p"),
        ("GET", "/v1/p/"),
        ("GET", "/v1"),
        ("GET", "/v2/p/stacks"),
        ("GET", "/v1/p/nothing"),
        ("POST", "/v1/p/stacks/n/i/nothing"),
        ("GET", "/v1/p/stacks/n/i/nothing/here"),
        ("GET", "/v1/p/stacks/n/i/events/e"),
        ("GET", "/v1/p/stacks/n/i/outputs/k/x"),
        ("DELETE", "/v1/p/stacks/n/i/snapshots/s/x"),
        ("GET", "/v1/p/stacks/n/i/resources/r/events/e/x"),
        ("GET", "/v1/p/template_versions/v"),
        ("OPTIONS", "/v1/p/template_versions/v"),
        ("GET", "/v1/p/software_configs/c/x"),
        ("GET", "/v1/p/stacks/n/i/snapshots/s/x/y\n"),
    ],
)
def test_unknown_urls_are_heats_json_404(method, path):
    response, route, _environ = _call(method, path)
    assert route is None
    assert response.status_int == 404
    error = _error(response)
    assert error["code"] == 404
    assert error["error"]["type"] == "HTTPNotFound"
    assert error["title"] == "Not Found"


@pytest.mark.parametrize(
    "method,path,allow",
    [
        ("PUT", "/v1/p/stacks", "GET, POST"),
        ("DELETE", "/v1/p/stacks/", "GET, POST"),
        ("GET", "/v1/p/stacks/preview", "POST"),
        ("POST", "/v1/p/stacks/n/i", "DELETE, GET, PATCH, PUT"),
        ("POST", "/v1/p/stacks/n/i/", "DELETE, GET, PATCH, PUT"),
        ("GET", "/v1/p/stacks/n/i/preview", "PATCH, PUT"),
        ("DELETE", "/v1/p/stacks/n/i/outputs", "GET"),
        ("GET", "/v1/p/stacks/n/i/actions", "POST"),
        ("PUT", "/v1/p/stacks/n/i/resources/r/", "GET, PATCH"),
        ("DELETE", "/v1/p/stacks/n/i/resources/r/events/e", "GET"),
        ("GET", "/v1/p/stacks/n/i/snapshots/s/restore", "POST"),
        ("PATCH", "/v1/p/software_configs/c", "DELETE, GET"),
        ("GET", "/v1/p/validate", "POST"),
        ("POST", "/v1/p/references", "GET"),
        # HEAD is not GET here (the regex router answered so too).
        ("HEAD", "/v1/p/stacks", "GET, POST"),
        ("HEAD", "/v1/p/stacks/n/", "DELETE, GET, PATCH, POST, PUT"),
    ],
)
def test_wrong_methods_are_heats_json_405_with_allow(method, path, allow):
    response, route, _environ = _call(method, path)
    assert route is None
    assert response.status_int == 405
    assert response.headers["Allow"] == allow
    if method != "HEAD":
        error = _error(response)
        assert error["code"] == 405
        assert error["error"]["type"] == "HTTPMethodNotAllowed"


@pytest.mark.parametrize(
    "path,allow",
    [
        ("/v1/p/stacks", "GET, POST"),
        ("/v1/p/stacks/n/i/", "DELETE, GET, PATCH, PUT"),
        ("/v1/p/stacks/n/i/outputs/k", "GET"),
        ("/v1/p/stacks/n/resources/r", "DELETE, GET, PATCH, POST, PUT"),
        ("/v1/p/rollouts/x/actions", "POST"),
    ],
)
def test_options_answers_allow(path, allow):
    response, route, _environ = _call("OPTIONS", path)
    assert route is None
    assert response.status_int == 204
    assert response.headers["Allow"] == allow


def test_the_query_string_is_the_handlers_not_pecans():
    # pecan's RestController would make this POST a DELETE.
    response, route, environ = _call(
        "POST", "/v1/p/stacks/n/i/actions", "_method=delete&a=1"
    )
    assert route[0].__name__ == "stack_action"
    assert environ["QUERY_STRING"] == "_method=delete&a=1"
    response, route, environ = _call("GET", "/v1/p/stacks", "limit=1")
    assert route[0].__name__ == "list_stacks"
    assert environ["QUERY_STRING"] == "limit=1"
    # Unrouted, the query is given back all the same.
    response, route, environ = _call("GET", "/v1/p/nothing", "x=1")
    assert route is None and environ["QUERY_STRING"] == "x=1"
    assert base.QUERY_KEY not in environ


def test_a_get_is_routed_without_pecans_rest_inspection(monkeypatch):
    """A GET of a URL's own method skips ``RestController``'s routing
    (three signature inspections, a namedtuple class each); the other
    methods still take it, and every GET still reaches its handler
    (``test_each_url_reaches_its_handler``)."""
    import pecan.rest

    seen = []
    real = pecan.rest.getargspec
    monkeypatch.setattr(
        pecan.rest, "getargspec", lambda f: seen.append(f) or real(f)
    )
    for path in ("/v1/p/stacks/n/i/resources", "/v1/p/stacks/n/i/"):
        assert _routed("GET", path)[0] in ("list_resources", "show_stack")
    assert seen == []
    assert _routed("PUT", "/v1/p/stacks/n/i")[0] == "update_stack"
    assert seen


def test_every_node_method_declares_a_rule_and_an_answer():
    for path, cls in base.walk(app.root.RootController):
        for method, handler in base.handlers(cls).items():
            assert handler.policy_rule, (method, path)
            assert handler.__name__ in openapi.RESPONSES, (method, path)


def test_a_handler_without_a_rule_cannot_be_routed():
    def handler(req, tenant):
        raise AssertionError("never routed")

    with pytest.raises(ValueError, match="no policy rule"):
        base.verb(handler)


def test_a_no_token_handler_is_exactly_a_no_token_route():
    """A handler that checks no policy is routed only where ``auth``
    lets requests through without a token, and only such handlers are."""
    for path, handlers in openapi._paths().items():
        url = re.sub(r"{(\w+)}", r"\1-x", path)
        for method, handler in handlers.items():
            environ = {"PATH_INFO": url, "REQUEST_METHOD": method}
            assert auth.no_token_route(environ) == (
                handler.policy_rule is request.NO_TOKEN
            ), (method, path)
