"""``engine.traversal.verify.outcome``: what a caller inside the engine
(a rollout) reads from the database about a verified update it started."""

from heat_lite.common import context
from heat_lite.db import api as db_api
from heat_lite.engine import definitions, validation
from heat_lite.engine.endpoint import service
from heat_lite.engine.traversal import verify
from tests import polling
from tests.unit.engine.test_inprocess import (
    engine,  # noqa: F401 - fixture
)

TMPL = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "a": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": "v1", "update_replace": True},
        }
    },
}
SIGNAL = {"timeout": 600, "checks": [{"type": "signal"}]}


def _outcome(stack_id, traversal, state, timeout=30):
    seen = {}

    def reached():
        seen["found"] = found = verify.outcome(stack_id, traversal)
        return found if found["state"] == state else None

    return polling.until(
        reached,
        timeout,
        lambda: "outcome %s (it is %s)" % (state, seen.get("found")),
        interval=0.05,
    )


def _update(proc, stack_id, value):
    stack = db_api.stack_get(stack_id)
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": dict(
                TMPL["resources"]["a"],
                properties={"value": value, "update_replace": True},
            )
        },
    }
    env = {"parameters": {}}
    bound = validation.bind(tmpl, env, {}, definitions.stack_info(stack))
    started = proc.ops.start(
        stack,
        "UPDATE",
        bound,
        new_template=(tmpl, env, {}),
        verify=SIGNAL,
    )
    return started["new_traversal"]


def test_outcome_through_pass_and_fail(engine):  # noqa: F811
    ctxt = context.RequestContext(project_id="p", user_id="u")
    api = service.EngineService(engine.ops)
    ident = api.create_stack(ctxt, "outcome", TMPL, {}, {}, None, None, {})
    stack_id = ident["stack_id"]
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")

    traversal = _update(engine, stack_id, "v2")
    _outcome(stack_id, traversal, "VERIFYING")
    api.stack_verdict(ctxt, ident, "PASS", "green")
    found = _outcome(stack_id, traversal, "SUCCEEDED")
    assert "all checks passed" in found["reason"]

    traversal = _update(engine, stack_id, "v3")
    _outcome(stack_id, traversal, "VERIFYING")
    api.stack_verdict(ctxt, ident, "FAIL", "red")
    found = _outcome(stack_id, traversal, "ROLLED_BACK")
    assert "red" in found["reason"]

    traversal = _update(engine, stack_id, "v4")
    _outcome(stack_id, traversal, "VERIFYING")
    newer = _update(engine, stack_id, "v5")
    assert verify.outcome(stack_id, traversal)["state"] == "SUPERSEDED"
    _outcome(stack_id, newer, "VERIFYING")
    api.delete_stack(ctxt, ident)
    _outcome(stack_id, newer, "DELETED")
