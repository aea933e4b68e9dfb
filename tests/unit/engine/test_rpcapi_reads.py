"""The calls the API may ask again (``rpcapi.READS``) are real engine
calls that change nothing."""

import ast
import inspect
import re
import textwrap

from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint import service
from heat_lite.engine.fleet.promotion import endpoint as promotion_endpoint
from heat_lite.engine.fleet.rollout import endpoint as fleet_endpoint
from heat_lite.resources import services

# Calls that start or change something: never asked twice.
WRITES = {
    "abandon_stack",
    "app_push",
    "app_webhook",
    "apply_plan",
    "cancel_build",
    "cancel_traversal",
    "create_app",
    "create_plan",
    "create_promotion",
    "create_rollout",
    "create_software_config",
    "create_software_deployment",
    "create_stack",
    "delete_app",
    "delete_plan",
    "delete_retention",
    "delete_rollout",
    "delete_snapshot",
    "delete_software_config",
    "delete_software_deployment",
    "delete_stack",
    "detect_drift",
    "promotion_action",
    "resource_mark_unhealthy",
    "resource_signal",
    "rollout_action",
    "set_retention",
    "set_update_semantics",
    "stack_action",
    "stack_cancel_update",
    "stack_restore",
    "stack_snapshot",
    "stack_verdict",
    "update_app",
    "update_software_deployment",
    "update_stack",
}


def _called():
    source = inspect.getsource(rpcapi.EngineAPI)
    return set(re.findall(r'_call\(\s*ctxt,\s*"(\w+)"', source))


def test_every_call_is_a_read_or_a_write():
    called = _called()
    assert called == rpcapi.READS | WRITES
    assert not rpcapi.READS & WRITES


def test_every_read_is_served_by_an_endpoint():
    endpoints = service.endpoints(None, services.UNAVAILABLE) + [
        fleet_endpoint.RolloutEndpoint,
        promotion_endpoint.PromotionEndpoint,
    ]
    served = {
        name
        for endpoint in endpoints
        for name in dir(endpoint)
        if not name.startswith("_")
    }
    assert rpcapi.READS <= served


def test_every_call_names_one_method_and_passes_keywords():
    """``_call(ctxt, "method", **kwargs)``: a second positional argument
    would be taken as the version (or fail), not sent."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(rpcapi.EngineAPI)))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_call"
    ]
    assert len(calls) >= len(rpcapi.READS)
    for node in calls:
        assert len(node.args) == 2, ast.unparse(node)
