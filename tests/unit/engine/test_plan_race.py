"""A saved plan's staleness check is atomic with the start of its update.

Two real threads meet at the exact point: the apply has read the stack
and checked the plan, and waits just before the conditional write that
starts its traversal (the ``_begin`` seam of ``StackOps``) while another
update, or another apply of the same plan, commits. The apply must then
be refused (stale, or already applied) and leave the other's traversal
in place; on a real SQLite file, PostgreSQL and MariaDB database each.
"""

import pytest

from heat_lite.common import context, exception
from heat_lite.db import api as db_api
from heat_lite.db import plans as db_plans
from heat_lite.engine.endpoint import plans, service
from heat_lite.engine.traversal import ops
from heat_lite.resources import services
from tests.unit.engine.test_start_race import (  # noqa: F401 - fixture
    ENV,
    TEMPLATE,
    PausingOps,
    Racer,
    RecordingDispatcher,
    _complete_stack,
    _update,
    database,
)

# On each database of test_start_race's fixture.
pytestmark = pytest.mark.usefixtures("database")
CTXT = context.RequestContext(project_id="p", user_id="u")


def _endpoint(stack_ops):
    return plans.PlanEndpoint(
        service.EngineService(stack_ops, services.UNAVAILABLE)
    )


def _ident(stack):
    return {"stack_id": stack["id"], "stack_name": stack["name"]}


def _plan(stack):
    return _endpoint(ops.StackOps(RecordingDispatcher())).create_plan(
        CTXT, _ident(stack), TEMPLATE, {}, {}, ENV, None, {}
    )


def _paused_apply(stack, plan):
    applier = PausingOps()
    endpoint = _endpoint(applier)
    racer = Racer(lambda: endpoint.apply_plan(CTXT, _ident(stack), plan["id"]))
    racer.start()
    assert applier.reached.wait(30)
    return applier, racer


def _error(racer):
    _, error = racer.outcome()
    assert error is not None, "the apply went through"
    return error.exc_info[1]  # the endpoint marks it an expected error


def test_an_update_that_commits_first_makes_the_apply_stale():
    stack = _complete_stack()
    plan = _plan(stack)
    applier, racer = _paused_apply(stack, plan)
    _update(ops.StackOps(RecordingDispatcher()), db_api.stack_get(stack["id"]))
    updating = db_api.stack_get(stack["id"])
    applier.go.set()
    error = _error(racer)
    assert isinstance(error, exception.StalePlan), error
    assert error.code == 409 and str(error).startswith("stale plan")
    assert "the traversal of stack %s changed" % stack["id"] in str(error)
    after = db_api.stack_get(stack["id"])
    assert after["current_traversal"] == updating["current_traversal"]
    assert applier.dispatcher.casts == [] and applier.attempts == 1
    stored = db_plans.plan_get(plan["id"], stack["id"], "p")
    assert stored["status"] == "STALE" and stored["applied_at"] is None


def test_a_plan_applied_meanwhile_is_not_applied_twice():
    stack = _complete_stack()
    plan = _plan(stack)
    applier, racer = _paused_apply(stack, plan)
    first = _endpoint(ops.StackOps(RecordingDispatcher())).apply_plan(
        CTXT, _ident(stack), plan["id"]
    )
    assert first["status"] == "APPLIED"
    applier.go.set()
    error = _error(racer)
    assert isinstance(error, exception.PlanAlreadyApplied), error
    after = db_api.stack_get(stack["id"])
    assert after["current_traversal"] == first["applied_traversal"]
    assert applier.dispatcher.casts == [] and applier.attempts == 1


def test_an_untouched_plan_applies():
    stack = _complete_stack()
    plan = _plan(stack)
    applier, racer = _paused_apply(stack, plan)
    applier.go.set()
    result, error = racer.outcome()
    assert error is None, error
    after = db_api.stack_get(stack["id"])
    assert result["applied_traversal"] == after["current_traversal"]
    assert (after["action"], after["status"]) == ("UPDATE", "IN_PROGRESS")
    with pytest.raises(Exception) as again:
        _endpoint(ops.StackOps(RecordingDispatcher())).apply_plan(
            CTXT, _ident(stack), plan["id"]
        )
    assert isinstance(again.value.exc_info[1], exception.PlanAlreadyApplied)
