"""Periodic drift detection (``engine.drift.periodic``) in one engine
process (SQLite file, fake:// transport): only stacks tagged
``heat-lite:detect-drift`` are detected, each by exactly one of the live
engines, again only once ``[drift] interval`` passed; a stack that
becomes DRIFTED gets one stack event and one
``orchestration.stack.drift.drifted`` notification (oslo.messaging's
``test`` driver), not another while it stays DRIFTED. The tests drive
the passes (``Periodic.tick`` with the time of the pass); the engine's
own watchdog gets no share, so nothing races them."""

import datetime
import uuid

import oslo_messaging as messaging
import pytest
from oslo_messaging.notify import _impl_test

from harness import inprocess, polling
from heat_lite import conf
from heat_lite.common import context, notify
from heat_lite.db import drift as db_drift
from heat_lite.db import events as db_events
from heat_lite.db import models, software_configs
from heat_lite.db import records as db_records
from heat_lite.engine.drift import periodic
from heat_lite.engine.endpoint import service
from heat_lite.engine.recovery import watchdog

CONF = conf.CONF
TAG = "heat-lite:detect-drift"
TMPL = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "c": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {"config": "echo hi"},
        },
        "v": {"type": "OS::Heat::Value", "properties": {"value": 1}},
    },
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    def no_shares(proc):
        proc.watchdog.shares = ()

    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("drift-periodic"),
        prepare=no_shares,
        first_pass=True,
    ) as proc:
        yield proc


@pytest.fixture
def notifications():
    # Registers [oslo_messaging_notifications] as the engine would.
    messaging.get_notification_transport(CONF)
    CONF.set_override("driver", ["test"], group="oslo_messaging_notifications")
    notify.cleanup()
    _impl_test.reset()
    yield _impl_test.NOTIFICATIONS
    CONF.clear_override("driver", group="oslo_messaging_notifications")
    notify.cleanup()


def _drift_sent(notifications):
    return [
        n
        for n in notifications
        if n[1]["event_type"] == "orchestration.stack.drift.drifted"
    ]


def _create(engine, name, tags):
    ctxt = context.RequestContext(project_id="p", user_id="u")
    ident = service.EngineService(engine.ops, engine.services).create_stack(
        ctxt, name, TMPL, {}, {}, None, None, {"tags": tags}
    )
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    return ident["stack_id"]


def _finished(stack_id, detection):
    def done():
        row = db_drift.drift_get(stack_id)
        return (
            row["detection"] == detection
            and row["status"] != db_drift.IN_PROGRESS
            and row
        )

    return polling.until(done, 30, "the detection of %s" % stack_id)


def _tick_all(engine, others, when):
    """One pass of every engine at ``when``: {engine id: started}."""
    engines = sorted([engine.engine_id] + others)
    passes = {engine.engine_id: engine.drift}
    for other in others:
        passes[other] = periodic.Periodic(
            lambda other=other: other, engine.drift.worker_api
        )
    return {e: p.tick(engines, now=when) for e, p in passes.items()}


@pytest.fixture
def interval():
    CONF.set_override("interval", 600, group="drift")
    yield 600
    CONF.clear_override("interval", group="drift")


def test_opted_in_stacks_are_detected_once_per_interval(
    engine, notifications, interval
):
    tagged = [_create(engine, "t%d" % i, [TAG, "x"]) for i in range(6)]
    plain = _create(engine, "plain", ["x"])
    others = ["other-%s" % uuid.uuid4().hex[:6] for _ in range(2)]
    now = models.utcnow()

    started = _tick_all(engine, others, now)
    by_stack = {}
    for engine_id, runs in started.items():
        for stack_id, detection in runs:
            assert stack_id not in by_stack, "detected twice"
            by_stack[stack_id] = (engine_id, detection)
    assert sorted(by_stack) == sorted(tagged)
    engines = sorted([engine.engine_id] + others)
    for stack_id, (engine_id, _) in by_stack.items():
        assert engine_id == watchdog.watcher(stack_id, engines)
    for stack_id, (_, detection) in by_stack.items():
        assert _finished(stack_id, detection)["status"] == "IN_SYNC"
    assert db_drift.drift_get(plain) is None

    # Not due again before the interval; due after it.
    assert _tick_all(engine, others, now + datetime.timedelta(seconds=60)) == {
        e: [] for e in engines
    }
    later = now + datetime.timedelta(seconds=601)
    again = _tick_all(engine, others, later)
    assert sorted(s for runs in again.values() for s, _ in runs) == sorted(
        tagged
    )
    for runs in again.values():
        for stack_id, detection in runs:
            _finished(stack_id, detection)
    assert _drift_sent(notifications) == []


def test_becoming_drifted_emits_one_event_and_notification(
    engine, notifications, interval
):
    stack_id = _create(engine, "drifter", [TAG])
    now = models.utcnow()
    me = [engine.engine_id]
    detection = dict(engine.drift.tick(me, now=now))[stack_id]
    assert _finished(stack_id, detection)["status"] == "IN_SYNC"

    # The config deleted through the software_configs API.
    (config_id,) = [
        r["physical_resource_id"]
        for r in db_records.resources_of_stacks([stack_id])[stack_id]
        if r["name"] == "c"
    ]
    software_configs.software_config_delete(config_id, "p")
    for n in (1, 2):
        when = now + datetime.timedelta(seconds=601 * n)
        detection = dict(engine.drift.tick(me, now=when))[stack_id]
        assert _finished(stack_id, detection)["status"] == "DRIFTED"

    drifted = [
        e
        for e in db_events.event_get_all(stack_id)
        if e["resource_action"] == "DRIFT"
    ]
    assert [
        (e["resource_name"], e["resource_status"], e["resource_type"])
        for e in drifted
    ] == [("drifter", "DRIFTED", "OS::Heat::Stack")], drifted
    assert drifted[0]["resource_status_reason"] == (
        "Stack drifted: 0 resource(s) MODIFIED, 1 DELETED"
    )
    (sent,) = _drift_sent(notifications)
    _ctxt, message, priority, _retry = sent
    assert (message["event_type"], priority) == (
        "orchestration.stack.drift.drifted",
        "INFO",
    )
    payload = message["payload"]
    assert payload["stack_id"] == stack_id
    assert payload["state"] == "CREATE_COMPLETE"
    assert payload["drift_counts"] == {
        "IN_SYNC": 1,
        "MODIFIED": 0,
        "DELETED": 1,
        "NOT_CHECKED": 0,
    }


def test_off_by_default_and_watchdog_hands_out_engines(engine):
    _create(engine, "untouched", [TAG])
    assert CONF.drift.interval == 0
    assert engine.drift.tick([engine.engine_id]) == []

    seen = []

    class Share:
        def tick(self, engines):
            seen.append(engines)

    dog = watchdog.Watchdog(
        engine.fence, engine.ops, engine.dispatcher, shares=[Share()]
    )
    dog.tick()
    assert seen and engine.engine_id in seen[0], seen
