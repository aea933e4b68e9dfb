"""``openstack app ...``: options to request bodies, and the HTTP calls
each command makes (through heatclient's client, as the others)."""

import json

import pytest
from osc_lib import exceptions

from heat_lite_client import app

TEMPLATE = """heat_template_version: 2021-04-16
parameters:
  image: {type: string}
"""


def _args(cls, argv):
    return cls(None, None).get_parser("openstack app").parse_args(argv)


def test_create_request_from_options(tmp_path):
    tmpl = tmp_path / "app.yaml"
    tmpl.write_text(TEMPLATE)
    env = tmp_path / "env.yaml"
    env.write_text("parameter_defaults:\n  flavor: m1.small\n")
    args = _args(
        app.CreateApp,
        [
            "shop",
            "--source-url", "https://git.example.com/shop.git",
            "--branch", "main",
            "--branch", "release/*",
            "--builder", "artifact",
            "--builder-option", "path=image.json",
            "--builder-option", "min_disk=2",
            "-t", str(tmpl),
            "-e", str(env),
            "--image-parameter", "image",
            "--stack", "main=shop-prod",
            "--webhook-secret", "s" * 16,
            "--verify-signal",
        ],
    )  # fmt: skip
    body = app.request(args)
    assert body["name"] == "shop"
    assert body["source"] == {
        "url": "https://git.example.com/shop.git",
        "branches": ["main", "release/*"],
    }
    assert body["builder"] == {
        "name": "artifact",
        "options": {"path": "image.json", "min_disk": 2},
    }
    assert body["template"]["parameters"] == {"image": {"type": "string"}}
    assert body["environment"] == {
        "parameter_defaults": {"flavor": "m1.small"}
    }
    assert body["image_parameter"] == "image"
    assert body["stacks"] == {"main": "shop-prod"}
    assert body["webhook_secret"] == "s" * 16
    assert body["verify"]["checks"] == [{"type": "signal"}]


def test_create_needs_its_required_options():
    with pytest.raises(SystemExit):
        _args(app.CreateApp, ["shop", "--builder", "artifact"])


def test_set_sends_only_what_was_given():
    assert app.request(
        _args(app.SetApp, ["shop", "--image-parameter", "img"]), create=False
    ) == {"image_parameter": "img"}
    assert app.request(
        _args(app.SetApp, ["shop", "--no-webhook-secret", "--no-verify"]),
        create=False,
    ) == {"webhook_secret": None, "verify": None}
    assert app.request(_args(app.SetApp, ["shop"]), create=False) == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["shop", "--source-url", "https://git.example.com/x"],
        ["shop", "--branch", "main"],
        ["shop", "--builder-option", "a=1"],
        ["shop", "--stack", "main"],
    ],
)
def test_set_refusals(argv):
    with pytest.raises(exceptions.CommandError):
        app.request(_args(app.SetApp, argv), create=False)


class _Response:
    headers = {"content-type": "application/json"}

    def __init__(self, body):
        self.body = body
        self.content = json.dumps(body).encode() if body else b""

    def json(self):
        return self.body


APP = {
    "id": "a1",
    "name": "shop",
    "source": {"url": "file:///srv/git/shop", "branches": ["main"]},
    "builder": {"name": "artifact", "options": {}},
    "image_parameter": "image",
    "stacks": {},
    "verify": None,
    "webhook": True,
    "version": 1,
    "created_at": "2026-12-04T03:00:00Z",
    "updated_at": None,
}


class _Http:
    def __init__(self):
        self.sent = []

    def _answer(self, method, path, data=None):
        self.sent.append((method, path, data))
        if method == "DELETE":
            return _Response(None)
        if method == "GET" and path.split("?")[0] == "/apps":
            return _Response({"apps": [APP]})
        return _Response({"app": APP})

    def __getattr__(self, method):
        return lambda path, **kw: self._answer(method.upper(), path, **kw)


def _run(cls, argv):
    http = _Http()
    cmd = cls(None, None)
    cmd.app = type("App", (), {})()
    cmd.app.client_manager = type("CM", (), {})()
    cmd.app.client_manager.orchestration = type(
        "Client", (), {"http_client": http}
    )()
    result = cmd.take_action(cmd.get_parser("openstack app").parse_args(argv))
    return http.sent, result


def test_each_command_calls_its_route():
    sent, (fields, values) = _run(app.ShowApp, ["shop"])
    assert sent == [("GET", "/apps/shop", None)]
    assert dict(zip(fields, values, strict=True))["webhook"] is True
    sent, (columns, rows) = _run(app.ListApp, ["--limit", "2"])
    assert sent == [("GET", "/apps?limit=2", None)]
    assert [r[1] for r in rows] == ["shop"]
    sent, _ = _run(app.SetApp, ["shop", "--image-parameter", "img"])
    assert sent == [("PATCH", "/apps/shop", {"image_parameter": "img"})]
    sent, _ = _run(app.DeleteApp, ["shop", "a2"])
    assert sent == [
        ("DELETE", "/apps/shop", None),
        ("DELETE", "/apps/a2", None),
    ]
    with pytest.raises(exceptions.CommandError):
        _run(app.SetApp, ["shop"])
