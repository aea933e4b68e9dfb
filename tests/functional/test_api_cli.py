"""Every ``openstack stack ...`` command a user types day to day, against
an all-in-one heat_lite (noauth; the keystone flavour is in
test_keystone.py)."""

import json
import os

import pytest
import yaml

from harness import deployment as deployment_mod
from harness import osc


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    d = deployment_mod.Deployment("sqlite", tmp_path_factory.mktemp("osc"))
    d.start()
    yield d
    d.stop()


def _osc(dep, *args, ok=True):
    cmd = [
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint("osc"),
        *args,
    ]
    result = osc.run(cmd, timeout=180)
    if ok:
        assert result.returncode == 0, "%s\n%s%s" % (
            " ".join(args),
            result.stdout,
            result.stderr,
        )
    return result


def _json(dep, *args):
    out = _osc(dep, *args, "-f", "json").stdout
    # --wait prints the events it saw before the document.
    lines = out.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith(("{", "["))
    )
    return json.loads("\n".join(lines[start:]))


def _write(tmp_path, name, resources, **extra):
    path = os.path.join(tmp_path, name)
    with open(path, "w") as f:
        yaml.safe_dump(
            dict(
                {
                    "heat_template_version": "2018-08-31",
                    "resources": resources,
                },
                **extra,
            ),
            f,
        )
    return path


def test_day_to_day_commands(dep, tmp_path):
    t1 = _write(
        tmp_path,
        "t1.yaml",
        {
            "a": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "one"},
            },
            "b": {
                "type": "OS::Heat::None",
                "depends_on": "a",
                "metadata": {"m": 1},
            },
        },
        outputs={"out": {"value": {"get_attr": ["a", "output"]}}},
    )
    assert _json(dep, "orchestration", "template", "validate", "-t", t1)[
        "Description"
    ]
    preview = _json(dep, "stack", "create", "--dry-run", "-t", t1, "p")
    assert preview["stack_name"] == "p"
    created = _json(
        dep, "stack", "create", "-t", t1, "--wait", "--tags", "x,y", "s1"
    )
    assert created["stack_status"] == "CREATE_COMPLETE"
    _json(dep, "stack", "create", "-t", t1, "--wait", "s2")
    assert len(_json(dep, "stack", "list", "--limit", "1")) == 1
    listed = _json(dep, "stack", "list", "--sort", "stack_name:desc")
    assert [s["Stack Name"] for s in listed] == ["s2", "s1"]
    tagged = _json(dep, "stack", "list", "--tags", "x")
    assert [s["Stack Name"] for s in tagged] == ["s1"]
    filtered = _json(dep, "stack", "list", "--property", "name=s2")
    assert [s["Stack Name"] for s in filtered] == ["s2"]
    assert _json(dep, "stack", "show", "s1")["stack_name"] == "s1"
    assert (
        _json(dep, "stack", "output", "show", "s1", "out")["output_value"]
        == "one"
    )
    assert [
        o["output_key"] for o in _json(dep, "stack", "output", "list", "s1")
    ] == ["out"]
    template = yaml.safe_load(
        _osc(dep, "stack", "template", "show", "s1", "-f", "yaml").stdout
    )
    assert set(template["resources"]) == {"a", "b"}
    rows = _json(dep, "stack", "resource", "list", "s1")
    assert {r["resource_name"] for r in rows} == {"a", "b"}
    shown = _json(dep, "stack", "resource", "show", "s1", "a")
    assert shown["resource_status"] == "CREATE_COMPLETE"
    assert _json(dep, "stack", "resource", "metadata", "s1", "b") == {"m": 1}
    signal = _osc(dep, "stack", "resource", "signal", "s1", "a", ok=False)
    assert signal.returncode != 0
    assert "Signal is not supported for resource." in signal.stderr
    _osc(dep, "stack", "resource", "mark", "unhealthy", "s1", "a", "why")
    assert (
        _json(dep, "stack", "resource", "show", "s1", "a")["resource_status"]
        == "CHECK_FAILED"
    )
    _osc(dep, "stack", "resource", "mark", "unhealthy", "--reset", "s1", "a")
    events = _json(dep, "stack", "event", "list", "s1", "--nested-depth", "2")
    assert events and all("resource_name" in e for e in events)
    event = [e for e in events if e["resource_name"] == "a"][0]
    one = _json(dep, "stack", "event", "show", "s1", "a", event["id"])
    assert one["resource_name"] == "a"

    t2 = _write(
        tmp_path,
        "t2.yaml",
        {
            "a": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "two"},
            }
        },
        outputs={"out": {"value": {"get_attr": ["a", "output"]}}},
    )
    changes = _json(dep, "stack", "update", "--dry-run", "-t", t2, "s1")
    assert [r["resource_name"] for r in changes["deleted"]] == ["b"]
    updated = _json(dep, "stack", "update", "-t", t2, "--wait", "s1")
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    for command, status in (
        ("suspend", "SUSPEND_COMPLETE"),
        ("resume", "RESUME_COMPLETE"),
        ("check", "CHECK_COMPLETE"),
    ):
        _osc(dep, "stack", command, "--wait", "s1")
        assert _json(dep, "stack", "show", "s1")["stack_status"] == status

    slow = _write(
        tmp_path,
        "slow.yaml",
        {
            "a": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "three", "wait_secs": 30},
            }
        },
    )
    _osc(dep, "stack", "update", "-t", slow, "s1")
    _osc(dep, "stack", "cancel", "--no-rollback", "--wait", "s1", ok=False)
    status = _json(dep, "stack", "show", "s1")["stack_status"]
    assert status == "UPDATE_FAILED", status
    _osc(dep, "stack", "delete", "-y", "--wait", "s1", "s2")
    assert _json(dep, "stack", "list") == []
