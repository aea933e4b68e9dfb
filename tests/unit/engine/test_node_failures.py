"""Whatever escapes a node fails it visibly; re-drives are capped.

The engine in one process (SQLite file, fake:// transport) with fake
plugin types whose bugs surface outside their handlers: in a poll
callback (data that cannot be stored) and when a cleanup node builds the
plugin (a constructor that raises). And a worker API that loses every
message of one stack, so that the watchdog's re-drives never arrive:
after ``node_redrive_limit`` backed-off re-drives the node fails with a
reason instead of being re-driven forever. A node waiting at a hook is
never failed that way.
"""

import time
import uuid

import pytest

from harness import endpoints, inprocess, polling, workers
from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import api as db_api
from heat_lite.db import records as db_records
from heat_lite.resources import base

CONF = conf.CONF
LIMIT = 2


class PollBug(base.Resource):
    """Its second completion check stores data that is not JSON."""

    properties_schema = None

    def handle_create(self):
        self.resource_id_set("poll-" + uuid.uuid4().hex[:6])
        return {"polls": 0}

    def check_create_complete(self, cookie):
        cookie["polls"] += 1
        if cookie["polls"] == 2:
            self.data_set("handle", object())
        return False


class LoadBug(base.Resource):
    """Cannot be built again once created: its constructor raises."""

    properties_schema = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self._data.get("armed"):
            raise ZeroDivisionError("cannot load %s" % self.name)

    def handle_create(self):
        self.resource_id_set("load-" + uuid.uuid4().hex[:6])
        self.data_set("armed", True)


class PropsBug(base.Resource):
    """Its own property validation breaks on a value from a function."""

    properties_schema = None

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        if not unresolved and values.get("x") == "boom":
            raise KeyError("x")
        return dict(values)


TYPES = {
    "Test::PollBug": PollBug,
    "Test::LoadBug": LoadBug,
    "Test::PropsBug": PropsBug,
}
OVERRIDES = {
    "heartbeat_interval": 0.2,
    "stall_timeout": 1.0,
    "node_redrive_limit": LIMIT,
    "node_redrive_backoff_max": 1.0,
}


def _lost_stack(stack_id):
    """The stacks whose casts never arrive: those named ``lost-*``."""
    return db_api.stack_get(stack_id)["name"].startswith("lost-")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite", tmp_path_factory.mktemp("faults"), OVERRIDES, types=TYPES
    ) as proc:
        with workers.losing(proc, when=_lost_stack) as losing:
            yield endpoints.Engine(proc.ops, proc.services), losing


CTXT = context.RequestContext(project_id="p", user_id="u")


def _create(svc, resources, env=None, prefix="s-", **sections):
    tmpl = {"heat_template_version": "2018-08-31", "resources": resources}
    tmpl.update(sections)
    return svc.create_stack(
        CTXT, prefix + uuid.uuid4().hex[:8], tmpl, {}, {}, env, None, {}
    )


def _record(stack_id, name):
    return next(
        r
        for r in db_records.resource_get_all(
            stack_id, roles=("current", "replaced", "pending-delete")
        )
        if r["name"] == name
    )


def _failed_events(stack_id, name):
    return [
        e
        for e in db_api.event_get_all(stack_id)
        if e["resource_name"] == name and e["resource_status"] == "FAILED"
    ]


def test_an_error_in_a_poll_callback_fails_the_resource(engine):
    svc, _ = engine
    ident = _create(svc, {"p": {"type": "Test::PollBug"}})
    stack = polling.stack_reaches(
        ident["stack_id"], "CREATE_FAILED", timeout=10
    )
    assert "not JSON serializable" in stack["status_reason"]
    record = _record(ident["stack_id"], "p")
    assert (record["action"], record["status"]) == ("CREATE", "FAILED")
    assert "TypeError" in record["status_reason"]
    assert record["engine_id"] is None
    assert _failed_events(ident["stack_id"], "p")


def test_an_error_resolving_properties_fails_the_resource(engine):
    svc, _ = engine
    ident = _create(
        svc,
        {
            "a": {"type": "OS::Heat::None"},
            # "boom" once ``a`` exists: a value that needs a resource is
            # first resolved (and checked) by the worker.
            "b": {
                "type": "Test::PropsBug",
                "properties": {
                    "x": {
                        "str_replace": {
                            "template": "boom",
                            "params": {"@a@": {"get_resource": "a"}},
                        }
                    }
                },
            },
        },
    )
    stack = polling.stack_reaches(
        ident["stack_id"], "CREATE_FAILED", timeout=10
    )
    assert "KeyError: resources.b: 'x'" in stack["status_reason"]
    record = _record(ident["stack_id"], "b")
    assert (record["action"], record["status"]) == ("CREATE", "FAILED")
    assert _failed_events(ident["stack_id"], "b")


def test_an_error_building_a_cleanup_node_fails_the_delete(engine):
    svc, _ = engine
    ident = _create(svc, {"l": {"type": "Test::LoadBug"}})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE", timeout=10)
    svc.delete_stack(CTXT, ident)
    stack = polling.stack_reaches(
        ident["stack_id"], "DELETE_FAILED", timeout=10
    )
    assert "cannot load l" in stack["status_reason"]
    record = _record(ident["stack_id"], "l")
    assert (record["action"], record["status"]) == ("DELETE", "FAILED")
    assert (
        "ZeroDivisionError: resources.l: cannot load l"
        in record["status_reason"]
    )
    assert any(
        "cannot load l" in e["resource_status_reason"]
        for e in _failed_events(ident["stack_id"], "l")
    )


def test_redrives_are_capped_then_the_node_fails(engine):
    svc, losing = engine
    # Every message of the stack is lost, the watchdog's re-drives too.
    stack_id = _create(svc, {"n": {"type": "OS::Heat::None"}}, prefix="lost-")[
        "stack_id"
    ]
    started = time.time()
    stack = polling.stack_reaches(stack_id, "CREATE_FAILED", timeout=20)
    elapsed = time.time() - started
    assert "No progress after %d re-drives" % LIMIT in stack["status_reason"]
    record = _record(stack_id, "n")
    assert (record["action"], record["status"]) == ("CREATE", "FAILED")
    assert "NodeStalled" in record["status_reason"]
    assert _failed_events(stack_id, "n")
    # The first cast and LIMIT re-drives, each after a backed-off wait.
    assert len(losing.lost) == 1 + LIMIT
    assert elapsed >= CONF.engine.stall_timeout * (1 + LIMIT) * 0.9
    lost = len(losing.lost)
    # A looping watchdog would cast again within this.
    polling.stays(lambda: len(losing.lost) == lost, 1.5, "no more casts")


def test_a_node_waiting_at_a_hook_is_not_failed(engine):
    svc, _ = engine
    env = {"resource_registry": {"resources": {"h": {"hooks": "pre-create"}}}}
    ident = _create(svc, {"h": {"type": "OS::Heat::None"}}, env)
    polling.stays(  # longer than the limit would allow
        lambda: db_api.stack_get(ident["stack_id"])["status"] == "IN_PROGRESS",
        CONF.engine.stall_timeout * (2 + LIMIT) * 2,
        "the stack in progress",
        interval=0.2,
    )
    svc.resource_signal(CTXT, ident, "h", {"unset_hook": "pre-create"})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE", timeout=10)
