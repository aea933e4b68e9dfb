"""``openstack stack ...`` (python-openstackclient + python-heatclient)
works unchanged against heat_lite, as a user would type it."""

import json
import os

import pytest
import yaml

from harness import deployment as deployment_mod
from harness import osc


def _osc(dep, *args, project="cli"):
    """Run ``openstack <args>`` (noauth) against ``dep``'s ``project``;
    return its standard output."""
    cmd = [
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint(project),
        *args,
    ]
    result = osc.run(cmd, timeout=180)
    assert result.returncode == 0, "%s\n%s%s" % (
        " ".join(args),
        result.stdout,
        result.stderr,
    )
    return result.stdout


@pytest.fixture(scope="module")
def allinone(tmp_path_factory):
    yield from deployment_mod.running("sqlite", tmp_path_factory.mktemp("cli"))


def _json(out):
    """The JSON document of a ``-f json`` output (``--wait`` prints the
    events it saw before it)."""
    return json.loads(out[out.index("{") :])


def _write(path, resources):
    with open(path, "w") as f:
        yaml.safe_dump(
            {"heat_template_version": "2018-08-31", "resources": resources}, f
        )


def test_stack_lifecycle_with_the_cli(allinone, tmp_path):
    t1 = os.path.join(tmp_path, "t1.yaml")
    _write(
        t1,
        {
            "a": {"type": "OS::Heat::None"},
            "b": {"type": "OS::Heat::None", "depends_on": "a"},
            "c": {"type": "OS::Heat::None", "depends_on": ["b"]},
        },
    )
    out = _osc(
        allinone, "stack", "create", "-t", t1, "--wait", "s1", "-f", "json"
    )
    assert _json(out)["stack_status"] == "CREATE_COMPLETE"
    rows = json.loads(
        _osc(allinone, "stack", "resource", "list", "s1", "-f", "json")
    )
    assert {r["resource_name"] for r in rows} == {"a", "b", "c"}
    shown = json.loads(
        _osc(allinone, "stack", "resource", "show", "s1", "a", "-f", "json")
    )
    assert shown["resource_status"] == "CREATE_COMPLETE"
    events = _osc(allinone, "stack", "event", "list", "s1")
    assert "Stack CREATE completed successfully" in events

    t2 = os.path.join(tmp_path, "t2.yaml")
    _write(
        t2,
        {
            "a": {"type": "OS::Heat::None"},
            "d": {"type": "OS::Heat::None", "depends_on": "a"},
        },
    )
    out = _osc(
        allinone, "stack", "update", "-t", t2, "--wait", "s1", "-f", "json"
    )
    assert _json(out)["stack_status"] == "UPDATE_COMPLETE"
    rows = json.loads(
        _osc(allinone, "stack", "resource", "list", "s1", "-f", "json")
    )
    assert {r["resource_name"] for r in rows} == {"a", "d"}
    _osc(allinone, "stack", "delete", "-y", "--wait", "s1")
    assert "s1" not in _osc(allinone, "stack", "list")


def test_software_config_with_the_cli(allinone, tmp_path):
    definition = os.path.join(tmp_path, "def.yaml")
    with open(definition, "w") as f:
        yaml.safe_dump(
            {"inputs": [{"name": "who"}], "options": {"debug": True}}, f
        )
    script = os.path.join(tmp_path, "run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho hi\n")
    created = _json(
        _osc(
            allinone,
            "software",
            "config",
            "create",
            "--definition-file",
            definition,
            "--config-file",
            script,
            "--group",
            "script",
            "hello",
            "-f",
            "json",
        )
    )
    shown = _json(
        _osc(
            allinone, "software", "config", "show", created["id"], "-f", "json"
        )
    )
    assert (shown["name"], shown["group"]) == ("hello", "script")
    assert shown["config"] == "#!/bin/sh\necho hi\n"
    assert shown["inputs"][0]["name"] == "who"
    rows = json.loads(
        _osc(allinone, "software", "config", "list", "-f", "json")
    )
    assert [r["id"] for r in rows] == [created["id"]]
    _osc(allinone, "software", "config", "delete", created["id"])
    assert (
        json.loads(_osc(allinone, "software", "config", "list", "-f", "json"))
        == []
    )
