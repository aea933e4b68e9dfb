"""The promotion commands' pure parts: options to the request body, and
the lines ``--wait`` prints."""

import io

from heat_lite_client import promotion


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
        def get(self, path):
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
