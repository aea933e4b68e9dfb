"""``engine.traversal.verify.outcome``: what a caller inside the engine
(a rollout) reads from the database about a verified update it started."""

import uuid

from harness import polling
from heat_lite.common import context
from heat_lite.db import api as db_api
from heat_lite.engine import definitions, validation
from heat_lite.engine.endpoint import service
from heat_lite.engine.traversal import ops, verify
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


def _update(proc, stack_id, value, fail=False, rollback=False):
    """Start a verified update (``fail``: its new resource fails;
    ``rollback``: the stack rolls back when it does)."""
    stack = db_api.stack_get(stack_id)
    props = {"value": value, "update_replace": True, "fail": fail}
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {"a": dict(TMPL["resources"]["a"], properties=props)},
    }
    env = {"parameters": {}}
    bound = validation.bind(tmpl, env, {}, definitions.stack_info(stack))
    started = proc.ops.start(
        stack,
        "UPDATE",
        bound,
        new_template=(tmpl, env, {}),
        extra={"disable_rollback": not rollback},
        verify=SIGNAL,
    )
    return started["new_traversal"]


def _created(proc, name):
    """(context, engine service, identity) of a new COMPLETE stack."""
    ctxt = context.RequestContext(project_id="p", user_id="u")
    api = service.EngineService(proc.ops, proc.services)
    ident = api.create_stack(ctxt, name, TMPL, {}, {}, None, None, {})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    return ctxt, api, ident


def _state(stack_id, traversal):
    return verify.outcome(stack_id, traversal)["state"]


def test_outcome_through_pass_and_fail(engine):  # noqa: F811
    ctxt, api, ident = _created(engine, "outcome")
    stack_id = ident["stack_id"]

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


def test_successors_name_the_end_of_their_traversal():
    t, other = str(uuid.uuid4()), str(uuid.uuid4())
    failed = ops.successor(t, ops.FAILED_STEP)
    rollback = ops.successor(t, ops.ROLLBACK_STEP)
    assert failed == ops.successor(t, ops.FAILED_STEP)  # derived
    assert len({failed, rollback, ops.successor(t, ops.CANCELLED_STEP)}) == 3
    assert failed != ops.successor(other, ops.FAILED_STEP)
    assert ops.end_of(t, failed, "FAILED") == "FAILED"
    assert ops.end_of(t, rollback, "IN_PROGRESS") == "ROLLING_BACK"
    assert ops.end_of(t, rollback, "COMPLETE") == "ROLLED_BACK"
    rollback_failed = ops.successor(rollback, ops.FAILED_STEP)
    assert ops.end_of(t, rollback_failed, "FAILED") == "FAILED"
    assert ops.end_of(t, t, "IN_PROGRESS") is None
    assert ops.end_of(t, other, "FAILED") is None
    assert ops.end_of(t, ops.successor(other, ops.FAILED_STEP), "X") is None


def test_own_ends_are_told_from_later_operations(engine):  # noqa: F811
    """Passed-then-superseded is not never-passed, and this update's
    failure (or rollback) is not a later update's."""
    ctxt, api, ident = _created(engine, "ends")
    stack_id = ident["stack_id"]

    passed = _update(engine, stack_id, "v2")
    _outcome(stack_id, passed, "VERIFYING")
    api.stack_verdict(ctxt, ident, "PASS", "green")
    _outcome(stack_id, passed, "SUCCEEDED")
    never = _update(engine, stack_id, "v3")
    found = _outcome(stack_id, passed, "SUPERSEDED_AFTER_PASS")
    assert "all checks passed" in found["reason"]
    _outcome(stack_id, never, "VERIFYING")

    # Cancelled without rollback: its own end. The update it replaced
    # stays "passed, then superseded".
    api.stack_cancel_update(ctxt, ident, cancel_with_rollback=False)
    found = _outcome(stack_id, never, "FAILED")
    assert "cancelled" in found["reason"]
    assert _state(stack_id, passed) == "SUPERSEDED_AFTER_PASS"

    # Failed without rollback, then a later update fails too: only the
    # later one is FAILED now; the first was superseded, never passed.
    first = _update(engine, stack_id, "v4", fail=True)
    found = _outcome(stack_id, first, "FAILED")
    assert "Test Resource failed" in found["reason"]
    later = _update(engine, stack_id, "v5", fail=True)
    _outcome(stack_id, later, "FAILED")
    assert _state(stack_id, first) == "SUPERSEDED"
    assert _state(stack_id, never) == "SUPERSEDED"

    # Failed and rolled back; a later failure is not its rollback's.
    back = _update(engine, stack_id, "v6", fail=True, rollback=True)
    found = _outcome(stack_id, back, "ROLLED_BACK")
    assert "ROLLBACK completed" in found["reason"]
    later = _update(engine, stack_id, "v7", fail=True)
    _outcome(stack_id, later, "FAILED")
    assert _state(stack_id, back) == "SUPERSEDED"
    api.delete_stack(ctxt, ident)
    _outcome(stack_id, later, "DELETED")
