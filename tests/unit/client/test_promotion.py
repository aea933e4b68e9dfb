"""The promotion commands' pure parts: options to the request body, and
the lines ``--wait`` prints."""

import io

import pytest
from osc_lib import exceptions

from heat_lite.common import states
from heat_lite_client import preview, promotion

# What the server serves as ``/v1/states.json``.
PROMOTION_STATES = states.as_dict()["promotion"]


def _args(argv):
    cmd = promotion.PromoteStack(None, None)
    return cmd.get_parser("openstack stack promote").parse_args(argv)


def test_request_from_options(tmp_path):
    env = tmp_path / "prod.yaml"
    env.write_text("parameter_defaults:\n  replicas: 3\n")
    args = _args(
        [
            "app1-test",
            "app1-prod",
            "--target-project",
            "prod",
            "--parameter",
            "flavor=large",
            "--parameter",
            "env=prod",
            "-e",
            str(env),
            "--reset-parameter",
            "debug",
            "--verify-signal",
            "--verify-timeout",
            "600",
        ]
    )
    assert promotion.request(args) == {
        "source": {"stack": "app1-test"},
        "target": {"stack": "app1-prod", "project": "prod"},
        "parameters": {"flavor": "large", "env": "prod"},
        "environment": {"parameter_defaults": {"replicas": 3}},
        "reset_parameters": ["debug"],
        "verify": {"timeout": 600, "checks": [{"type": "signal"}]},
    }


def test_a_bare_promotion_sends_only_source_and_target():
    assert promotion.request(_args(["a", "b"])) == {
        "source": {"stack": "a"},
        "target": {"stack": "b"},
    }


def test_wait_prints_each_change_once():
    answers = [
        {"id": "p", "status": "IN_PROGRESS", "status_reason": "verifying"},
        {"id": "p", "status": "FAILED", "status_reason": "gate failed"},
    ]

    class Http:
        def get_endpoint(self):
            return "http://heat.example:8004/v1/demo"

        def get(self, path):
            if path == "http://heat.example:8004/v1/states.json":
                served = Response({})
                served.body = states.as_dict()
                return served
            assert path == "/promotions/p"
            return Response(answers.pop(0))

    class Response:
        content = b"x"
        headers = {"content-type": "application/json"}

        def __init__(self, body):
            self.body = {"promotion": body}

        def json(self):
            return self.body

    client = type("Client", (), {"http_client": Http()})()
    out = io.StringIO()
    first = {"id": "p", "status": "IN_PROGRESS", "status_reason": "started"}
    done = promotion.wait(client, first, 0, out)
    assert done["status"] == "FAILED"
    assert out.getvalue().splitlines() == [
        "promotion p IN_PROGRESS: started",
        "promotion p IN_PROGRESS: verifying",
        "promotion p FAILED: gate failed",
    ]


def test_display_formats_the_maps():
    fields, values = promotion._display(
        {"id": "p", "status": "COMPLETE", "source": {"stack_name": "a"}}
    )
    assert fields == ["id", "status", "source"]
    assert values[2].machine_readable() == {"stack_name": "a"}


class _Terminal(io.StringIO):
    """A stdin that is a terminal, with the user's answer typed in."""

    def isatty(self):
        return True


CREATED = {
    "id": "p1",
    "status": "COMPLETE",
    "target": {"stack_name": "app-copy", "project": "prod", "created": True},
}


@pytest.mark.parametrize("answer", ["y\n", "yes\n", "Y\n"])
def test_a_rollback_deleting_its_target_asks_first(answer):
    err = io.StringIO()
    promotion.confirm_delete(CREATED, _Terminal(answer), err)
    assert err.getvalue() == (
        "Rolling back promotion p1 will delete stack app-copy (project "
        "prod), which the promotion created. Are you sure [y/N]? "
    )


@pytest.mark.parametrize("answer", ["\n", "n\n", "no\n", ""])
def test_anything_but_yes_does_nothing(answer):
    with pytest.raises(exceptions.CommandError, match="Not confirmed"):
        promotion.confirm_delete(CREATED, _Terminal(answer), io.StringIO())


def test_without_a_terminal_it_refuses():
    err = io.StringIO()
    with pytest.raises(exceptions.CommandError) as raised:
        promotion.confirm_delete(CREATED, io.StringIO("y\n"), err)
    assert "will delete stack app-copy" in str(raised.value)
    assert "--yes" in str(raised.value)
    assert err.getvalue() == ""  # nothing asked


def test_only_an_undone_promotion_that_created_its_target_asks():
    vocabulary = PROMOTION_STATES
    assert promotion._deletes_its_target(CREATED, vocabulary)
    updated = dict(CREATED, target={"stack_name": "x", "created": False})
    assert not promotion._deletes_its_target(updated, vocabulary)
    for done in ("FAILED", "ROLLED_BACK"):
        undone = dict(CREATED, status=done)
        assert not promotion._deletes_its_target(undone, vocabulary)


def test_preview_of_a_new_target_with_nothing_dropped():
    fields, values = preview.display(
        {
            "source": {"stack": "a", "id": "1", "project": "test"},
            "target": {"stack": "b", "project": "prod", "exists": False},
            "template_changed": False,
            "parameters": {},
            "dropped": {},
            "resources": {"added": ["x", "y"]},
            "verify": None,
        }
    )
    shown = dict(
        zip(fields, (v.human_readable() for v in values), strict=True)
    )
    assert shown == {
        "source": "test/a (1)",
        "target": "prod/b, does not exist: created",
        "template_changed": "no (same template)",
        "parameters": "",
        "dropped": "nothing",
        "resources": "added: x, y",
        "verify": "none (no gate)",
    }
