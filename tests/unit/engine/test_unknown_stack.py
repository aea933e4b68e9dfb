"""A worker message for a stack this engine's database does not hold (a
stack purged meanwhile, a message from another deployment sharing the
broker) is dropped with one warning: no exception, no node failed, no
stack made up."""

import logging
import uuid

import pytest

from harness import inprocess
from heat_lite.db import stacks as db_stacks
from heat_lite.engine.traversal import planner


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite", tmp_path_factory.mktemp("unknown")
    ) as proc:
        yield proc


@pytest.mark.parametrize(
    "entity, phase",
    [
        (0, planner.BARRIER),
        (0, planner.STACK),
        (7, planner.UPDATE),
        (7, planner.CLEANUP),
    ],
)
def test_a_node_of_an_unknown_stack_is_dropped(engine, entity, phase, caplog):
    stack_id = str(uuid.uuid4())
    caplog.set_level(logging.WARNING)
    assert engine.runner.run(stack_id, 3, entity, phase) == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    if entity == 0:
        (warning,) = [
            r for r in caplog.records if r.levelno == logging.WARNING
        ]
        assert stack_id in warning.getMessage()
        assert "no such stack" in warning.getMessage()
    assert db_stacks.stack_state(stack_id) is None
