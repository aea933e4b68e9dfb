"""No race can resurrect or fork a stack: an update racing a delete.

The conditional write that starts a traversal (``traversal_begin``) also
checks that the stack is not deleted and that its action does not refuse
the operation, and ``StackOps.start`` re-applies Heat's rules when it
lost the race. These tests interleave two real threads at the exact
point: one operation has read the stack and waits just before its
conditional write (the ``_begin`` seam) while the other commits; on a
real SQLite file, PostgreSQL and MariaDB database each.
"""

import threading
import uuid

import pytest

from harness import databases
from heat_lite import conf
from heat_lite.common import context, exception, states
from heat_lite.db import api as db_api
from heat_lite.db import traversals as db_traversals
from heat_lite.engine.endpoint import service
from heat_lite.engine.traversal import ops, planner
from heat_lite.resources import services

CONF = conf.CONF
TEMPLATE = {"heat_template_version": "2018-08-31"}
ENV = {"parameters": {}, "resource_registry": {}}


class RecordingDispatcher:
    """Records the first nodes a started traversal casts."""

    def __init__(self):
        self.casts = []

    def cast(self, nodes):
        self.casts.extend(nodes)


class PausingOps(ops.StackOps):
    """StackOps that stops just before its first conditional write until
    the test lets it go, so another operation can commit in between."""

    def __init__(self):
        super().__init__(RecordingDispatcher())
        self.reached = threading.Event()
        self.go = threading.Event()
        self.attempts = 0

    def _begin(self, *args):
        self.attempts += 1
        if self.attempts == 1:
            self.reached.set()
            assert self.go.wait(30), "the test never let the write go"
        return super()._begin(*args)


class Racer(threading.Thread):
    """Runs ``fn`` in a thread; keeps its result or exception."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn = fn
        self.result = self.error = None

    def run(self):
        try:
            self.result = self.fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            self.error = exc

    def outcome(self):
        self.join(30)
        assert not self.is_alive(), "the racer did not finish"
        return self.result, self.error


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def database(request, tmp_path_factory):
    CONF([], project="heat_lite")
    with databases.private_database(
        request.param, tmp_path_factory.mktemp("race")
    ):
        yield request.param


def _complete_stack():
    """A new stack (no resources) that is CREATE_COMPLETE."""
    stack_id = str(uuid.uuid4())
    stack = db_api.stack_create(
        {
            "id": stack_id,
            "name": "race-" + stack_id[:8],
            "tenant": "p",
            "username": "u",
            "action": "CREATE",
            "status": "IN_PROGRESS",
            "status_reason": "",
            "current_traversal": "",
            "timeout": None,
            "disable_rollback": True,
            "tags": None,
        },
        TEMPLATE,
        ENV,
        {},
    )
    stack_ops = ops.StackOps(RecordingDispatcher())
    stack_ops.start(
        stack, "CREATE", None, goal_template_id=stack["raw_template_id"]
    )
    _finish(stack_id)
    stack = db_api.stack_get(stack_id)
    assert (stack["action"], stack["status"]) == ("CREATE", "COMPLETE")
    return stack


def _finish(stack_id):
    """Complete the stack's running traversal (it has no resources)."""
    traversal = db_api.stack_get(stack_id)["current_traversal"]
    ops.StackOps(RecordingDispatcher()).mark_complete(stack_id, traversal)


def _update(stack_ops, stack):
    ops.check_start(stack, "UPDATE")  # what the endpoint checks first
    return stack_ops.start(
        stack, "UPDATE", None, new_template=(TEMPLATE, ENV, {})
    )


def _delete(stack_ops, stack):
    return stack_ops.start(stack, "DELETE")


def test_update_that_loses_to_a_delete_is_refused(database):
    stack = _complete_stack()
    updater = PausingOps()
    update = Racer(lambda: _update(updater, stack))
    update.start()
    assert updater.reached.wait(30)
    deleter = ops.StackOps(RecordingDispatcher())
    _delete(deleter, db_api.stack_get(stack["id"]))
    deleting = db_api.stack_get(stack["id"])
    updater.go.set()
    _, error = update.outcome()
    # What an update sent after the delete gets: 400, "when it is deleting".
    assert isinstance(error, exception.NotSupported), error
    assert error.code == 400
    assert "Updating a stack when it is deleting" in str(error)
    after = db_api.stack_get(stack["id"])
    assert (after["action"], after["status"]) == ("DELETE", "IN_PROGRESS")
    assert after["current_traversal"] == deleting["current_traversal"]
    assert updater.dispatcher.casts == []


def test_update_that_loses_to_a_finished_delete_is_not_found(database):
    stack = _complete_stack()
    updater = PausingOps()
    update = Racer(lambda: _update(updater, stack))
    update.start()
    assert updater.reached.wait(30)
    _delete(ops.StackOps(RecordingDispatcher()), db_api.stack_get(stack["id"]))
    _finish(stack["id"])
    updater.go.set()
    _, error = update.outcome()
    assert isinstance(error, exception.StackNotFound), error
    assert error.code == 404
    after = db_api.stack_get(stack["id"])
    assert after["deleted_at"] is not None
    assert (after["action"], after["status"]) == ("DELETE", "COMPLETE")
    assert updater.dispatcher.casts == []


def test_delete_that_loses_to_an_update_still_deletes(database):
    stack = _complete_stack()
    deleter = PausingOps()
    delete = Racer(lambda: _delete(deleter, stack))
    delete.start()
    assert deleter.reached.wait(30)
    _update(ops.StackOps(RecordingDispatcher()), db_api.stack_get(stack["id"]))
    updating = db_api.stack_get(stack["id"])
    assert updating["action"] == "UPDATE"
    deleter.go.set()
    _, error = delete.outcome()
    assert error is None
    assert deleter.attempts == 2  # lost once, re-read, won
    after = db_api.stack_get(stack["id"])
    assert (after["action"], after["status"]) == ("DELETE", "IN_PROGRESS")
    assert after["current_traversal"] != updating["current_traversal"]
    # A late update now gets the same answer.
    with pytest.raises(exception.NotSupported):
        _update(ops.StackOps(RecordingDispatcher()), after)


def _begin(stack, refused=()):
    traversal = str(uuid.uuid4())
    plan = planner.TraversalPlanner(stack["id"], stack["raw_template_id"], {})
    return db_traversals.traversal_begin(
        stack["id"],
        stack["current_traversal"],
        {
            "action": "UPDATE",
            "status": "IN_PROGRESS",
            "current_traversal": traversal,
        },
        [],
        plan,
        refused_actions=refused,
    )


def test_the_write_itself_refuses_a_deleted_stack(database):
    stack = _complete_stack()
    _delete(ops.StackOps(RecordingDispatcher()), stack)
    _finish(stack["id"])
    deleted = db_api.stack_get(stack["id"])
    # Even with the right traversal in hand, a deleted stack never starts.
    with pytest.raises(exception.ConcurrentTransaction):
        _begin(deleted)
    assert db_api.stack_get(stack["id"])["action"] == "DELETE"


def test_the_write_itself_refuses_a_refused_action(database):
    stack = _complete_stack()
    _delete(ops.StackOps(RecordingDispatcher()), stack)
    deleting = db_api.stack_get(stack["id"])
    with pytest.raises(exception.ConcurrentTransaction):
        _begin(deleting, refused=("DELETE", "SUSPEND"))
    assert (
        db_api.stack_get(stack["id"])["current_traversal"]
        == deleting["current_traversal"]
    )
    _begin(deleting)  # without the rule the same write goes through


def test_cancel_that_loses_to_a_delete_is_refused(database):
    stack = _complete_stack()
    _update(ops.StackOps(RecordingDispatcher()), stack)
    canceller = PausingOps()
    endpoint = service.EngineService(canceller, services.UNAVAILABLE)
    ctxt = context.RequestContext(project_id="p", user_id="u")
    ident = {"stack_id": stack["id"], "stack_name": stack["name"]}
    cancel = Racer(lambda: endpoint.stack_cancel_update(ctxt, ident))
    cancel.start()
    assert canceller.reached.wait(30)
    _delete(ops.StackOps(RecordingDispatcher()), db_api.stack_get(stack["id"]))
    canceller.go.set()
    _, error = cancel.outcome()
    error = error.exc_info[1]  # the endpoint marks it an expected error
    # A rollback that lost to the delete does not pretend it was done.
    assert isinstance(error, exception.NotSupported), error
    assert "Cancelling update when stack is DELETE_IN_PROGRESS" in str(error)
    after = db_api.stack_get(stack["id"])
    assert (after["action"], after["status"]) == ("DELETE", "IN_PROGRESS")


def test_the_write_refuses_what_the_transition_table_refuses(database):
    """Walk the table (``states.check_transition``) through the write
    that starts a traversal: a stack in each action, each operation with
    what the engine excludes for it; refused exactly where the table
    refuses, so a stack that took a refused action after the check still
    refuses."""
    stack = _complete_stack()
    for current in states.Action:
        assert db_api.stack_set_state(
            stack["id"],
            db_api.stack_get(stack["id"])["current_traversal"],
            {"action": current, "status": "COMPLETE"},
        )
        for new in states.Action:
            seen = db_api.stack_get(stack["id"])
            refused = states.check_transition(current, new) is not None
            try:
                _begin(seen, refused=tuple(states.refused_from(new)))
            except exception.ConcurrentTransaction:
                assert refused, (new, current)
            else:
                assert not refused, (new, current)
            # Back to the action under test for the next operation.
            db_api.stack_set_state(
                stack["id"],
                db_api.stack_get(stack["id"])["current_traversal"],
                {"action": current, "status": "COMPLETE"},
            )
