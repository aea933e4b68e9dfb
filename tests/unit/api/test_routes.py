"""The route table, the policy rules and the OpenAPI document, without a
server: every route has a policy rule and a documented answer; 404 vs
405; the defaults of the policy."""

import pytest
import webob.exc

from heat_lite import conf
from heat_lite.api import openapi
from heat_lite.api.controllers import v1
from heat_lite.common import context, exception, policy

CONF = conf.CONF


@pytest.fixture(scope="module", autouse=True)
def _conf():
    CONF([], project="heat_lite")
    policy.reset()


def test_every_handler_has_a_rule_and_a_documented_answer():
    for pattern, handlers in v1.build().routes():
        for method, handler in handlers.items():
            assert handler.policy_rule, (method, pattern)
            assert handler.__name__ in openapi.RESPONSES, handler.__name__
    doc = openapi.build()
    rules = {r.name for r in policy.list_rules()}
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            assert operation["x-policy-rule"] in rules, (method, path)


def test_matching():
    router = v1.build()
    handler, args = router.match("GET", "/v1/p/stacks/n/abc/resources/r")
    assert handler.__name__ == "list_resources" or args["resource"] == "r"
    handler, args = router.match("GET", "/v1/p/stacks/n/resources")
    assert handler.__name__ == "lookup" and args["sub"] == "resources"
    handler, args = router.match("POST", "/v1/p/stacks/n/verdict")
    assert handler.__name__ == "lookup" and args["sub"] == "verdict"
    handler, args = router.match("POST", "/v1/p/stacks/n/i/verdict")
    assert handler.__name__ == "verdict" and args["stack_id"] == "i"
    handler, args = router.match(
        "GET", "/v1/p/stacks/arn:openstack:heat::p:stacks/n/i/events"
    )
    assert handler.__name__ == "lookup_arn"
    assert (args["name"], args["stack_id"], args["sub"]) == (
        "n",
        "i",
        "/events",
    )
    with pytest.raises(webob.exc.HTTPMethodNotAllowed) as err:
        router.match("DELETE", "/v1/p/stacks/n/i/outputs")
    assert err.value.headers["Allow"] == "GET"
    with pytest.raises(webob.exc.HTTPNotFound):
        router.match("GET", "/v1/p/stacks/n/i/nothing/here")
    # A trailing newline is not a trailing slash.
    with pytest.raises(webob.exc.HTTPNotFound):
        router.match("GET", "/v1/p/stacks/n/i/snapshots/x/y\n")


def _ctxt(roles, project="p"):
    return context.RequestContext(
        project_id=project, user_id="u", roles=roles, is_admin="admin" in roles
    )


@pytest.mark.parametrize(
    "roles,rule,allowed",
    [
        (["reader"], "stacks:show", True),
        (["reader"], "stacks:create", False),
        (["reader"], "resource:signal", False),
        (["member", "reader"], "stacks:delete", True),
        (["heat_stack_owner"], "stacks:update", True),
        ([], "actions:action", True),
        (["member"], "stacks:global_index", False),
        (["member"], "service:index", False),
        (["admin"], "stacks:global_index", True),
        (["admin"], "service:index", True),
        (["member"], "promotions:create", True),
        (["reader"], "promotions:create", False),
        (["member"], "promotions:create_cross_project", False),
        (["admin"], "promotions:create_cross_project", True),
        (["reader"], "references:index", True),
        (["member"], "references:all_projects", False),
    ],
)
def test_policy_defaults(roles, rule, allowed):
    try:
        policy.authorize(_ctxt(roles), rule, "p")
        result = True
    except exception.Forbidden:
        result = False
    assert result is allowed


def test_policy_checks_the_project():
    with pytest.raises(exception.Forbidden):
        policy.authorize(_ctxt(["member"], project="q"), "stacks:show", "p")
    policy.authorize(_ctxt(["admin"], project="q"), "stacks:show", "p")
