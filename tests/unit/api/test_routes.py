"""The policy rules and the OpenAPI document, without a server: every
documented rule exists; the defaults of the policy (the routes
themselves: ``test_tree``)."""

import pytest

from heat_lite import conf
from heat_lite.api import openapi
from heat_lite.common import context, exception, policy

CONF = conf.CONF


@pytest.fixture(scope="module", autouse=True)
def _conf():
    CONF([], project="heat_lite")
    policy.reset()


def test_every_documented_rule_exists():
    doc = openapi.build()
    rules = {r.name for r in policy.list_rules()}
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if operation.get("security") == []:
                # Only the webhook: its signature is its credential.
                assert path.endswith("/apps/{app}/webhook"), path
                assert "x-policy-rule" not in operation
                continue
            assert operation["x-policy-rule"] in rules, (method, path)


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
        (["reader"], "promotions:preview", True),
        (["member"], "promotions:create_cross_project", False),
        (["admin"], "promotions:create_cross_project", True),
        (["reader"], "references:index", True),
        (["member"], "references:all_projects", False),
        (["member"], "apps:push", True),
        (["reader"], "apps:push", False),
        (["reader"], "apps:builds", True),
        (["reader"], "apps:build_log", True),
        (["reader"], "apps:cancel", False),
        (["member"], "apps:cancel", True),
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
