"""Fixtures of the fleet tests (rollouts, promotions): one engine
process per test module (SQLite file, fake:// transport), and a fresh
project per test."""

import uuid

import pytest

from heat_lite import conf
from heat_lite.common import context
from heat_lite.engine import process
from tests.unit import databases

CONF = conf.CONF


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("rollouts")
    CONF([], project="heat_lite")
    suffix = uuid.uuid4().hex[:8]
    CONF.set_override("transport_url", "fake://")
    CONF.set_override("topic", "engine-" + suffix, group="engine")
    CONF.set_override("worker_topic", "worker-" + suffix, group="engine")
    CONF.set_override("heartbeat_interval", 0.2, group="engine")
    CONF.set_override("engine_life_check_timeout", 3.0, group="engine")
    with databases.private_database("sqlite", workdir):
        proc = process.EngineProcess(binary="test-rollouts")
        proc.rollouts.driver.poll = 0.1
        proc.promotions.driver.poll = 0.1
        proc.start()
        yield proc
        proc.stop()


@pytest.fixture
def project():
    return context.RequestContext(
        project_id="p" + uuid.uuid4().hex[:8], user_id="u"
    )
