"""``openstack stack traversal list|cancel``, ``stack semantics set`` and
``--update-semantics``: the pure parts (the table row, the hook that
adds the field to heatclient's calls)."""

import argparse
import types

import pytest

from heat_lite.common import states
from heat_lite_client import traversal


def test_semantics_choices_are_the_servers():
    assert traversal.SEMANTICS == states.UPDATE_SEMANTICS


def test_row_keeps_the_column_order_and_empties_missing_values():
    row = traversal.row(
        {
            "id": "t1",
            "action": "UPDATE",
            "state": "SUPERSEDED",
            "requested_by": "alice",
            "superseded_by": "t2",
            "created_at": "2026-12-04T23:00:00",
            "started_at": "2026-12-04T23:00:00",
            "finished_at": None,
        }
    )
    assert len(row) == len(traversal.COLUMNS)
    assert row[:5] == ("t1", "UPDATE", "SUPERSEDED", "alice", "t2")
    assert row[-2:] == ("", "")


def test_the_hook_sends_update_semantics_with_the_stack():
    sent = []

    class Stacks:
        def create(self, **fields):
            sent.append(fields)

    client = types.SimpleNamespace(stacks=Stacks())
    cmd = types.SimpleNamespace(
        app=types.SimpleNamespace(
            client_manager=types.SimpleNamespace(orchestration=client)
        )
    )
    hook = traversal.CreateHook(cmd)
    parser = argparse.ArgumentParser()
    hook.get_parser(parser)
    hook.before(parser.parse_args(["--update-semantics", "queue"]))
    client.stacks.create(stack_name="s")
    assert sent == [{"stack_name": "s", "update_semantics": "queue"}]
    with pytest.raises(SystemExit):
        parser.parse_args(["--update-semantics", "later"])
    # Without the option heatclient's call is left alone.
    client.stacks = Stacks()
    traversal.CreateHook(cmd).before(parser.parse_args([]))
    client.stacks.create(stack_name="t")
    assert sent[-1] == {"stack_name": "t"}
