"""``openstack stack drift detect --wait``: polls until the detection
ends and exits 1 when it FAILED (the real server path is in
tests/functional/test_cloud_drift.py; here the HTTP answers are canned),
and the ``--revert-drift`` hook on heatclient's ``stack update``."""

import argparse
import types

import pytest

from heat_lite_client import drift

STACK = types.SimpleNamespace(stack_name="web", id="s1")


def _report(status):
    return {
        "stack_id": "s1",
        "stack_name": "web",
        "drift_status": status,
        "resources": [],
    }


class _Http:
    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.posted = []

    def post(self, path, data):
        self.posted.append((path, data))
        return types.SimpleNamespace(content=b"")

    def get(self, path):
        assert path == "/stacks/web/s1/drift"
        body = {"drift": _report(self.statuses.pop(0))}
        return types.SimpleNamespace(
            content=b"x",
            headers={"content-type": "application/json"},
            json=lambda: body,
        )


def _run(argv, statuses):
    http = _Http(statuses)
    client = types.SimpleNamespace(
        http_client=http,
        stacks=types.SimpleNamespace(get=lambda name, resolve_outputs: STACK),
    )
    app = types.SimpleNamespace(
        client_manager=types.SimpleNamespace(orchestration=client)
    )
    cmd = drift.DetectDrift(app, None)
    parsed = cmd.get_parser("openstack stack drift detect").parse_args(argv)
    shown = []
    cmd.produce_output = lambda args, cols, data: shown.append(list(data)) or 0
    return cmd.run(parsed), http, shown


@pytest.mark.parametrize(
    "final, code", [("DRIFTED", 0), ("IN_SYNC", 0), ("DETECTION_FAILED", 1)]
)
def test_wait_polls_until_done_and_exits_one_on_failure(final, code):
    statuses = ["DETECTION_IN_PROGRESS", "DETECTION_IN_PROGRESS", final]
    rc, http, shown = _run(["web", "--wait", "--poll", "0"], statuses)
    assert rc == code
    assert http.posted == [("/stacks/web/s1/actions", {"detect_drift": None})]
    assert http.statuses == []
    assert shown[0][0][2] == final


def test_without_wait_it_shows_the_first_answer_and_succeeds():
    rc, http, shown = _run(["web"], ["DETECTION_IN_PROGRESS", "IN_SYNC"])
    assert rc == 0
    assert http.statuses == ["IN_SYNC"]
    assert shown[0][0][2] == "DETECTION_IN_PROGRESS"


def test_revert_drift_hook_sends_the_field_with_update_and_dry_run():
    sent = []

    class Stacks:
        def update(self, stack_id, **fields):
            sent.append(("update", stack_id, fields))

        def preview_update(self, stack_id, **fields):
            sent.append(("preview_update", stack_id, fields))

    client = types.SimpleNamespace(stacks=Stacks())
    cmd = types.SimpleNamespace(
        app=types.SimpleNamespace(
            client_manager=types.SimpleNamespace(orchestration=client)
        )
    )
    parser = argparse.ArgumentParser()
    drift.UpdateHook(cmd).get_parser(parser)
    drift.UpdateHook(cmd).before(parser.parse_args(["--revert-drift"]))
    client.stacks.update("s1", existing=True)
    client.stacks.preview_update("s1", existing=True)
    assert sent == [
        ("update", "s1", {"existing": True, "revert_drift": True}),
        ("preview_update", "s1", {"existing": True, "revert_drift": True}),
    ]
    # Without the option heatclient's calls are left alone.
    sent.clear()
    client.stacks = Stacks()
    drift.UpdateHook(cmd).before(parser.parse_args([]))
    client.stacks.update("s2")
    assert sent == [("update", "s2", {})]
