"""The engine in one process (SQLite file, fake:// transport) with fakes
for what a test must break: a worker API that loses messages."""

import time
import uuid

import pytest

from heat_lite import conf
from heat_lite.common import context
from heat_lite.db import api as db_api
from heat_lite.db import migration
from heat_lite.engine import process, service

CONF = conf.CONF


class LosingWorkerAPI:
    """Drops the first ``lose`` casts, as a broker restart would."""

    def __init__(self, real, lose):
        self.real = real
        self.lose = lose
        self.lost = []

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        if self.lose > 0:
            self.lose -= 1
            self.lost.append(nodes)
            return
        self.real.check_resources(ctxt, stack_id, traversal, nodes)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("inprocess")
    CONF([], project="heat_lite")
    suffix = uuid.uuid4().hex[:8]
    CONF.set_override("transport_url", "fake://")
    CONF.set_override("connection", "sqlite:///%s/db.sqlite" % workdir,
                      group="database")
    CONF.set_override("topic", "engine-" + suffix, group="engine")
    CONF.set_override("worker_topic", "worker-" + suffix, group="engine")
    CONF.set_override("heartbeat_interval", 0.2, group="engine")
    CONF.set_override("stall_timeout", 1.0, group="engine")
    migration.upgrade()
    proc = process.EngineProcess(binary="test")
    proc.start()
    yield proc
    proc.stop()


def _wait(stack_id, expected, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        stack = db_api.stack_get(stack_id)
        if "%s_%s" % (stack["action"], stack["status"]) == expected:
            return stack
        time.sleep(0.05)
    raise AssertionError("stack %s is %s_%s" % (stack_id, stack["action"],
                                               stack["status"]))


def test_lost_messages_are_redriven(engine):
    losing = LosingWorkerAPI(engine.dispatcher.worker_api, lose=1)
    engine.dispatcher.worker_api = losing
    try:
        ctxt = context.RequestContext(project_id="p", user_id="u")
        tmpl = {"heat_template_version": "2018-08-31", "resources": {
            "a": {"type": "OS::Heat::None"},
            "b": {"type": "OS::Heat::None", "depends_on": "a"}}}
        ident = service.EngineService(engine.ops).create_stack(
            ctxt, "lost", tmpl, {}, {}, None, None, {})
        started = time.time()
        _wait(ident["stack_id"], "CREATE_COMPLETE")
        assert losing.lost, "the first cast was not lost"
        # Re-driven by the watchdog once the stall timeout passed.
        assert time.time() - started >= CONF.engine.stall_timeout * 0.9
    finally:
        engine.dispatcher.worker_api = losing.real


def test_watchdog_claims_dead_engines(engine):
    stale = str(uuid.uuid4())
    db_api.service_create({"engine_id": stale, "host": "h", "hostname": "h",
                           "binary": "b", "topic": "t", "pid": 1,
                           "report_interval": 1})
    deadline = time.time() + 30
    while time.time() < deadline:
        alive = {s["engine_id"] for s in db_api.service_get_all()}
        if stale not in alive:
            break
        time.sleep(0.2)
    assert stale not in {s["engine_id"] for s in db_api.service_get_all()}
    assert engine.engine_id in {s["engine_id"]
                                for s in db_api.service_get_all()}
