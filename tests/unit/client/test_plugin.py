"""The CLI plugin's pure parts: options to documents, the progress lines
of ``--wait``, the hook that adds ``verify`` to heatclient's calls."""

import argparse
import io
import types

import pytest
from heatclient import exc as heat_exc
from osc_lib import exceptions

from heat_lite.common import states
from heat_lite_client import options, rollout, verify
from heat_lite_client import states as client_states

# What the server serves as ``/v1/states.json``.
TARGET_STATES = states.as_dict()["rollout_target"]


def _parse(adder, argv, **kwargs):
    parser = argparse.ArgumentParser()
    adder(parser, **kwargs)
    return parser.parse_args(argv)


def test_scalar_is_json_else_the_string():
    assert options.scalar("true") is True
    assert options.scalar("3") == 3
    assert options.scalar('"5"') == "5"
    assert options.scalar("yes") == "yes"  # not YAML's true
    assert options.scalar("5.4.46") == "5.4.46"


def test_selector_from_options_and_file(tmp_path):
    path = tmp_path / "sel.yaml"
    path.write_text("tags: [php]\nparameters: {tier: web}\n")
    args = _parse(
        options.add_selector_options,
        [
            "--match-name",
            "app-*",
            "--match-tag",
            "prod",
            "--match-parameter",
            "php_version=5.4.*",
            "--match-resource",
            "OS::Nova::Server,image=php-5.4*,flavor=m1.*",
            "--match-resource",
            "OS::Heat::*",
            "--match-status",
            "CREATE_COMPLETE",
            "--selector-file",
            str(path),
        ],
        prefix="match-",
    )
    assert options.selector(args) == {
        "stack_name": "app-*",
        "tags": ["php", "prod"],
        "parameters": {"tier": "web", "php_version": "5.4.*"},
        "resources": [
            {
                "type": "OS::Nova::Server",
                "properties": {"image": "php-5.4*", "flavor": "m1.*"},
            },
            {"type": "OS::Heat::*"},
        ],
        "status": ["CREATE_COMPLETE"],
    }
    assert options.selector(_parse(options.add_selector_options, [])) == {}


def test_a_pair_without_equals_is_refused():
    args = _parse(options.add_selector_options, ["--parameter", "novalue"])
    with pytest.raises(exceptions.CommandError, match="KEY=VALUE"):
        options.selector(args)


def test_verify_from_options():
    args = _parse(
        options.add_verify_options,
        [
            "--verify-output",
            "healthy=yes",
            "--verify-output",
            "ok=true",
            "--verify-signal",
            "--verify-timeout",
            "30",
        ],
    )
    assert options.verify(args) == {
        "timeout": 30,
        "checks": [
            {"type": "output", "output": "healthy", "equals": "yes"},
            {"type": "output", "output": "ok", "equals": True},
            {"type": "signal"},
        ],
    }
    assert options.verify(_parse(options.add_verify_options, [])) is None
    lone = _parse(options.add_verify_options, ["--verify-timeout", "5"])
    with pytest.raises(exceptions.CommandError, match="needs"):
        options.verify(lone)


def _target(name, batch, status, reason=None):
    return {
        "stack_id": "id-" + name,
        "stack_name": name,
        "batch": batch,
        "status": status,
        "status_reason": reason,
    }


def test_progress_says_what_changed_per_batch():
    seen = {}
    doc = {
        "name": "php",
        "status": "IN_PROGRESS",
        "status_reason": None,
        "strategy": {"canary": 1},
        "targets": [
            _target("a", 0, "UPDATING"),
            _target("b", 1, "PENDING"),
            _target("c", 1, "PENDING"),
        ],
    }
    assert rollout.progress(doc, seen, TARGET_STATES) == [
        "canary (1): 1 UPDATING",
        "rollout php IN_PROGRESS",
    ]
    assert rollout.progress(doc, seen, TARGET_STATES) == []  # nothing new
    doc["targets"] = [
        _target("a", 0, "SUCCEEDED"),
        _target("b", 1, "ROLLED_BACK", "output healthy"),
        _target("c", 1, "VERIFYING"),
    ]
    assert rollout.progress(doc, seen, TARGET_STATES) == [
        "canary (1): 1 SUCCEEDED",
        "batch 1 (2): 1 VERIFYING, 1 ROLLED_BACK",
        "  b ROLLED_BACK: output healthy",
    ]
    doc["targets"][2] = _target("c", 1, "SUCCEEDED")
    doc["status"], doc["status_reason"] = "COMPLETE", "2 of 3 succeeded"
    assert rollout.progress(doc, seen, TARGET_STATES) == [
        "batch 1 (2): 1 SUCCEEDED, 1 ROLLED_BACK",
        "rollout php COMPLETE: 2 of 3 succeeded",
    ]


def test_targets_column():
    targets = [_target("a", 0, "SUCCEEDED"), _target("b", 1, "FAILED", "x")]
    column = rollout.TargetsColumn(targets)
    assert column.human_readable() == "0 a SUCCEEDED\n1 b FAILED: x"
    assert column.machine_readable() == targets


def test_the_hook_sends_verify_with_the_stack():
    sent = []

    class Stacks:
        def update(self, stack_id, **fields):
            sent.append((stack_id, fields))

    client = types.SimpleNamespace(stacks=Stacks())
    cmd = types.SimpleNamespace(
        app=types.SimpleNamespace(
            client_manager=types.SimpleNamespace(orchestration=client)
        )
    )
    hook = verify.UpdateHook(cmd)
    parser = argparse.ArgumentParser()
    hook.get_parser(parser)
    args = parser.parse_args(["--verify-signal"])
    assert hook.before(args) is args
    client.stacks.update("s1", parameters={"a": "1"})
    assert sent == [
        (
            "s1",
            {
                "parameters": {"a": "1"},
                "verify": {"checks": [{"type": "signal"}]},
            },
        )
    ]
    # No verify option: heatclient's call is left alone.
    plain = verify.UpdateHook(cmd)
    client.stacks = Stacks()
    plain.before(parser.parse_args([]))
    client.stacks.update("s2")
    assert sent[-1] == ("s2", {})


class _Response:
    def __init__(self, body):
        self.body = body
        self.content = b"x"
        self.headers = {"content-type": "application/json"}

    def json(self):
        return self.body


class _Http:
    """heatclient's http_client for ``api.find_rollout``: two rollouts
    named "twin", one named "solo"."""

    rollouts = [
        {"id": "r1", "name": "twin"},
        {"id": "r2", "name": "twin"},
        {"id": "r3", "name": "solo"},
    ]

    def get(self, path):
        from heatclient import exc

        if path == "/rollouts":
            return _Response({"rollouts": self.rollouts})
        wanted = path.rsplit("/", 1)[1]
        for r in self.rollouts:
            if r["id"] == wanted:
                return _Response({"rollout": r})
        raise exc.HTTPNotFound()


def test_find_rollout_by_id_or_only_name():
    from heat_lite_client import api

    client = types.SimpleNamespace(http_client=_Http())
    assert api.find_rollout(client, "r2")["id"] == "r2"
    assert api.find_rollout(client, "solo")["id"] == "r3"
    with pytest.raises(exceptions.CommandError, match="More than one"):
        api.find_rollout(client, "twin")
    with pytest.raises(exceptions.CommandError, match="not found: nope"):
        api.find_rollout(client, "nope")


def test_wait_after_an_action_prints_only_what_changed_since():
    """``rollout rollback --wait``: the batches as the rollout's create
    left them were printed then; only the rollback's changes now."""
    before = {
        "id": "r",
        "name": "php",
        "status": "COMPLETE",
        "status_reason": "1 SUCCEEDED, 1 ROLLED_BACK",
        "strategy": {"canary": 0},
        "targets": [
            _target("a", 0, "SUCCEEDED"),
            _target("b", 0, "ROLLED_BACK", "output healthy"),
        ],
    }
    acted = dict(before, status="IN_PROGRESS", status_reason="Rolling back")
    ended = dict(
        before,
        status="CANCELLED",
        status_reason="rolled back",
        targets=[
            _target("a", 0, "ROLLED_BACK", "back"),
            _target("b", 0, "ROLLED_BACK", "output healthy"),
        ],
    )

    class Http:
        def get_endpoint(self):
            return "http://heat.example:8004/v1/demo"

        def get(self, path):
            if path == "http://heat.example:8004/v1/states.json":
                return _Response(states.as_dict())
            return _Response({"rollout": ended})

    out = io.StringIO()
    client = types.SimpleNamespace(http_client=Http())
    assert rollout.wait(client, acted, 0, out, since=before) is ended
    assert out.getvalue().splitlines() == [
        "rollout php IN_PROGRESS: Rolling back",
        "batch 0 (2): 2 ROLLED_BACK",
        "  a ROLLED_BACK: back",
        "rollout php CANCELLED: rolled back",
    ]


def test_the_states_are_read_once_per_command_from_the_server():
    asked = []

    class Http:
        def get_endpoint(self):
            return "http://heat.example:8004/v1/demo/"

        def get(self, path):
            asked.append(path)
            return _Response(states.as_dict())

    client = types.SimpleNamespace(http_client=Http())
    got = client_states.vocabulary(client, "rollout_target")
    assert got == TARGET_STATES
    assert client_states.vocabulary(client, "rollout")["groups"]["ACTIVE"]
    assert asked == ["http://heat.example:8004/v1/states.json"]


def test_an_older_server_without_states_is_named():
    class Http:
        def get_endpoint(self):
            return "http://old.example:8004/v1/demo"

        def get(self, path):
            raise heat_exc.HTTPNotFound()

    client = types.SimpleNamespace(http_client=Http())
    with pytest.raises(exceptions.CommandError) as raised:
        client_states.vocabulary(client, "rollout")
    message = str(raised.value)
    assert "http://old.example:8004" in message
    assert "older than this client" in message
