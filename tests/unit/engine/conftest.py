"""Fixtures of the fleet tests (rollouts, promotions): one engine
process per test module (SQLite file, fake:// transport), and a fresh
project per test."""

import uuid

import pytest

from harness import helpers, inprocess
from heat_lite import conf
from heat_lite.common import context

CONF = conf.CONF


def _quick_drivers(proc):
    proc.rollouts.driver.poll = 0.1
    proc.promotions.driver.poll = 0.1
    # No keeper pass of its own: a test that takes a flow over calls
    # ``take_over`` itself. The background pass (every heartbeat) could
    # claim a flow back to this same engine life before the flow it took
    # from noticed the loss, which then never stops (a race the takeover
    # tests lost under load).
    proc.rollouts.start = proc.promotions.start = lambda: None


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("rollouts"),
        {"heartbeat_interval": 0.2, "engine_life_check_timeout": 3.0},
        prepare=_quick_drivers,
        binary="test-rollouts",
    ) as proc:
        yield proc


@pytest.fixture
def apps_conf(engine):
    """Apps may fetch from file:///srv/git/*; secrets can be sealed."""
    CONF.set_override("allowed_sources", ["file:///srv/git/*"], group="apps")
    CONF.set_override("auth_encryption_key", "k" * 32)
    yield
    CONF.clear_override("allowed_sources", group="apps")
    CONF.clear_override("auth_encryption_key")


@pytest.fixture
def project():
    return context.RequestContext(
        project_id="p" + uuid.uuid4().hex[:8], user_id="u"
    )


@pytest.fixture
def hold(tmp_path):
    """``hold(name)``: a context in which TestResources whose ``hold`` is
    ``name`` wait in every action (the test looks at an operation in
    progress for as long as it needs; no timer to race)."""
    ledger = str(tmp_path / "ledger")
    CONF.set_override("test_resource_ledger", ledger, group="engine")
    yield lambda name: helpers.holding(ledger, name)
    CONF.clear_override("test_resource_ledger", group="engine")
