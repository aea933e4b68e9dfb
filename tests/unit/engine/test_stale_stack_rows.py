"""A decision made on a stack row read before the stack finished must not
undo the finish.

The watchdog reads the stacks in progress, then decides per stack: fail
the ones whose traversal row is gone ("the engine went down while it was
being stored") or whose time is up. A stack that completes in between
keeps its traversal id (only its traversal row is purged), so a write
guarded by the traversal alone failed -- and rolled back -- a stack that
had just completed (CI, stop 22: a rollout target ROLLED_BACK after
"Stack ... has no traversal; failing it"). Every write that fails or
cancels a running traversal is also guarded by the stack being IN_PROGRESS.
"""

import datetime

from harness import polling
from heat_lite.common import states
from heat_lite.db import api as db_api
from heat_lite.db import traversals as db_traversals
from heat_lite.engine.endpoint import service

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"a": {"type": "OS::Heat::None"}},
}


def _completed(engine, project, name, args=None):
    ident = service.EngineService(engine.ops, engine.services).create_stack(
        project, name, TEMPLATE, {}, {}, None, None, args or {}
    )
    return polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")


def _as_read_before_it_finished(stack):
    """The row as ``stacks_in_progress`` returned it, an hour into the
    action (older than any stall or action timeout)."""
    started = stack["action_started_at"] - datetime.timedelta(hours=1)
    return dict(
        stack, status=states.Status.IN_PROGRESS, action_started_at=started
    )


def _unchanged(stack):
    now = db_api.stack_get(stack["id"])
    assert (now["action"], now["status"]) == ("CREATE", "COMPLETE"), now
    assert now["current_traversal"] == stack["current_traversal"]
    assert now["status_reason"] == stack["status_reason"]
    events = [
        (e["resource_action"], e["resource_status"])
        for e in db_api.event_get_all(stack["id"], stack["name"])
    ]
    assert ("ROLLBACK", "IN_PROGRESS") not in events, events
    assert ("CREATE", "FAILED") not in events, events


def test_the_watchdog_does_not_fail_a_stack_that_completed_after_its_read(
    engine, project
):
    stack = _completed(engine, project, "finished-meanwhile")
    assert db_traversals.traversal_get(stack["current_traversal"]) is None
    stale = _as_read_before_it_finished(stack)
    assert engine.watchdog._redrive(stale) == []
    _unchanged(stack)


def test_nor_roll_it_back(engine, project):
    stack = _completed(
        engine, project, "rolls-back", {"disable_rollback": False}
    )
    assert not stack["disable_rollback"]
    assert engine.watchdog._redrive(_as_read_before_it_finished(stack)) == []
    _unchanged(stack)


def test_a_stale_timeout_does_not_fail_a_completed_stack(engine, project):
    stack = _completed(engine, project, "timed-out-meanwhile")
    stale = _as_read_before_it_finished(stack)
    assert engine.watchdog._timed_out(stale)
    _unchanged(stack)


def test_a_stale_cancel_does_not_fail_a_completed_stack(engine, project):
    stack = _completed(engine, project, "cancelled-meanwhile")
    stale = _as_read_before_it_finished(stack)
    assert not engine.ops.cancel(stale, "Stack cancelled")
    _unchanged(stack)
