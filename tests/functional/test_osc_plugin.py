"""heat_lite's openstackclient plugin (heat-lite-client), with the real
``openstack`` CLI against an all-in-one heat_lite (SQLite, noauth):
``stack query``, ``stack rollout ...`` (``--wait`` over application
stacks, one of which fails its check and goes back; ``rollback --wait``),
``stack verdict``, the ``--verify-*`` options of ``stack create`` /
``stack update``, and the confirmation before a ``stack promotion
rollback`` deletes the stack the promotion created."""

import json
import os
import pty
import subprocess

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.unit.engine.test_rollouts import NEW, OLD, app_template

APPS = ("app-00", "app-01", "app-02", "app-03")
BROKEN = "app-02"  # its ``healthy`` output says "no" under NEW
REPLACED = "app-01"  # its ``app`` resource is replaced on upgrade
HEADERS = {"X-Auth-User": "tester"}


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("osc-plugin")
    )


@pytest.fixture(scope="module")
def heat(dep):
    return dep.client()


@pytest.fixture(scope="module")
def apps(heat):
    """Four applications on OLD and one stack that is no application."""
    ids = {
        name: helpers.create(
            heat,
            name,
            app_template(),
            parameters={
                "broken_on": NEW if name == BROKEN else "none",
                "replace": name == REPLACED,
            },
        )
        for name in APPS
    }
    ids["other"] = helpers.create(
        heat,
        "other",
        helpers.template({"a": {"type": "OS::Heat::None"}}),
    )
    for stack_id in ids.values():
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def _osc(dep, *args, code=0, project="demo", stdin=subprocess.DEVNULL):
    """``openstack <args>`` against ``dep``; its stdin is no terminal
    unless the test gives one (a command that asks must not wait on the
    terminal that runs the tests)."""
    cmd = [
        deployment_mod.command("openstack"),
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint(project),
        *args,
    ]
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, stdin=stdin
    )
    assert result.returncode == code, "%s -> %s\n%s%s" % (
        " ".join(args),
        result.returncode,
        result.stdout,
        result.stderr,
    )
    return result


def _json(result):
    """The JSON document of a ``-f json`` output, and the lines printed
    before it (``--wait``'s progress)."""
    out = result.stdout
    start = min(i for i in (out.find("{"), out.find("[")) if i >= 0)
    return json.loads(out[start:]), out[:start].splitlines()


def _nonzero(counts):
    return {state: n for state, n in counts.items() if n}


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _output(heat, stack_id, key):
    return heat.stacks.output_show(stack_id, key)["output"]["output_value"]


def test_query(dep, apps):
    rows, _ = _json(
        _osc(
            dep,
            "stack",
            "query",
            "--name",
            "app-*",
            "--parameter",
            "php_version=5.4.*",
            "-f",
            "json",
        )
    )
    assert [r["Stack Name"] for r in rows] == list(APPS)
    assert rows[0]["ID"] == apps["app-00"]
    assert rows[0]["Matched"]["parameters"] == {"php_version": OLD}
    rows, _ = _json(
        _osc(
            dep,
            "stack",
            "query",
            "--resource",
            "OS::Heat::TestResource,value=5.4.4?",
            "--status",
            "CREATE_COMPLETE",
            "-f",
            "json",
        )
    )
    assert [r["Stack Name"] for r in rows] == list(APPS)
    found = rows[0]["Matched"]["resources"]
    assert [(m["name"], m["properties"]) for m in found] == [
        ("app", {"value": OLD})
    ]


def test_rollout_create_wait_list_show(dep, heat, apps):
    before = {name: _physical(heat, apps[name]) for name in APPS}
    result = _osc(
        dep,
        "stack",
        "rollout",
        "create",
        "php-" + NEW,
        "--match-name",
        "app-*",
        "--match-parameter",
        "php_version=5.4.*",
        "--parameter",
        "php_version=" + NEW,
        "--verify-output",
        "healthy=yes",
        "--verify-timeout",
        "1",
        "--canary",
        "1",
        "--batch-size",
        "2",
        "--max-failures",
        "1",
        "--wait",
        "--poll",
        "0.3",
        "-f",
        "json",
    )
    rollout, progress = _json(result)
    assert rollout["status"] == "COMPLETE", rollout
    assert _nonzero(rollout["counts"]) == {"SUCCEEDED": 3, "ROLLED_BACK": 1}
    by_name = {t["stack_name"]: t for t in rollout["targets"]}
    assert [by_name[n]["batch"] for n in APPS] == [0, 1, 1, 2]
    assert by_name[BROKEN]["status"] == "ROLLED_BACK"
    # Progress per batch, and the target that went back with its reason.
    assert "canary (1): 1 SUCCEEDED" in progress
    assert "batch 1 (2): 1 SUCCEEDED, 1 ROLLED_BACK" in progress
    assert "batch 2 (1): 1 SUCCEEDED" in progress
    assert any(
        line.startswith("  %s ROLLED_BACK: " % BROKEN) and "healthy" in line
        for line in progress
    ), progress
    assert progress[-1].startswith("rollout php-%s COMPLETE" % NEW)

    for name in APPS:
        version = _output(heat, apps[name], "version")
        assert version == (OLD if name == BROKEN else NEW), name
    # The broken one is back on its very resources; the replaced one not.
    assert _physical(heat, apps[BROKEN]) == before[BROKEN]
    after = _physical(heat, apps[REPLACED])
    assert after["app"] != before[REPLACED]["app"]

    listed, _ = _json(_osc(dep, "stack", "rollout", "list", "-f", "json"))
    assert [(r["ID"], r["Status"]) for r in listed] == [
        (rollout["id"], "COMPLETE")
    ]
    shown, _ = _json(
        _osc(dep, "stack", "rollout", "show", "php-" + NEW, "-f", "json")
    )
    assert shown["id"] == rollout["id"]
    assert shown["strategy"] == {
        "canary": 1,
        "batch_size": 2,
        "max_failures": 1,
    }
    # Again on the one still on OLD, tolerating no failure: FAILED, exit 1.
    result = _osc(
        dep,
        "stack",
        "rollout",
        "create",
        "again",
        "--match-parameter",
        "php_version=" + OLD,
        "--parameter",
        "php_version=" + NEW,
        "--verify-output",
        "healthy=yes",
        "--verify-timeout",
        "1",
        "--wait",
        "--poll",
        "0.3",
        "-f",
        "json",
        code=1,
    )
    failed, _ = _json(result)
    assert failed["status"] == "FAILED"
    assert _nonzero(failed["counts"]) == {"ROLLED_BACK": 1}
    _osc(dep, "stack", "rollout", "delete", "again", "php-" + NEW)
    listed = requests.get(
        dep.endpoint() + "/rollouts", headers=HEADERS, timeout=30
    ).json()["rollouts"]
    assert listed == []
    # The server's own 400 (no stack matches) comes through.
    empty = _osc(
        dep,
        "stack",
        "rollout",
        "create",
        "x",
        "--match-name",
        "nothing-*",
        "--parameter",
        "php_version=1",
        "--verify-signal",
        code=1,
    )
    assert "ERROR" in empty.stderr or "400" in empty.stderr


def _target(heat_rollout, name):
    return next(t for t in heat_rollout["targets"] if t["stack_name"] == name)


def test_pause_resume_verdict_cancel(dep, heat, apps):
    """Targets verified by a signal: the CLI's verdicts decide them."""
    good = [n for n in APPS if n != BROKEN]

    def show():  # read directly: only the commands under test use the CLI
        url = "%s/rollouts/%s" % (dep.endpoint(), created["id"])
        response = requests.get(url, headers=HEADERS, timeout=30)
        return response.json()["rollout"]

    def target_is(name, status):
        return lambda: _target(show(), name)["status"] == status

    created, _ = _json(
        _osc(
            dep,
            "stack",
            "rollout",
            "create",
            "signalled",
            "--match-parameter",
            "php_version=" + NEW,
            "--parameter",
            "php_version=5.4.47",
            "--verify-signal",
            "--verify-timeout",
            "60",
            "-f",
            "json",
        )
    )
    assert created["status"] == "IN_PROGRESS"
    assert [t["stack_name"] for t in created["targets"]] == good
    polling.until(target_is(good[0], "VERIFYING"), what="first verifying")
    paused, _ = _json(
        _osc(dep, "stack", "rollout", "pause", "signalled", "-f", "json")
    )
    assert paused["status"] == "PAUSED"
    _osc(dep, "stack", "verdict", good[0], "--pass", "--reason", "all green")
    polling.until(target_is(good[0], "SUCCEEDED"), what="first succeeded")
    assert _target(show(), good[1])["status"] == "PENDING"
    # A running rollout cannot be deleted.
    busy = _osc(dep, "stack", "rollout", "delete", "signalled", code=1)
    assert "is PAUSED: cannot delete it" in busy.stderr
    resumed, _ = _json(
        _osc(dep, "stack", "rollout", "resume", "signalled", "-f", "json")
    )
    assert resumed["status"] == "IN_PROGRESS"
    polling.until(target_is(good[1], "VERIFYING"), what="second verifying")
    _osc(dep, "stack", "rollout", "cancel", "signalled")
    _osc(
        dep,
        "stack",
        "verdict",
        good[1],
        "--fail",
        "--reason",
        "3 tests failed",
    )
    ended, _ = _json(
        _osc(
            dep,
            "stack",
            "rollout",
            "show",
            "signalled",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        )
    )
    assert ended["status"] == "CANCELLED"
    assert _nonzero(ended["counts"]) == {
        "SUCCEEDED": 1,
        "ROLLED_BACK": 1,
        "SKIPPED": 1,
    }
    assert "3 tests failed" in _target(ended, good[1])["status_reason"]
    assert _output(heat, apps[good[0]], "version") == "5.4.47"
    assert _output(heat, apps[good[1]], "version") == NEW


def test_verify_options_of_stack_update_and_create(dep, heat, apps):
    # A failing output check: --wait ends in failure, the stack rolled back.
    before = _physical(heat, apps[BROKEN])
    failed = _osc(
        dep,
        "stack",
        "update",
        "--existing",
        "--parameter",
        "php_version=" + NEW,
        "--verify-output",
        "healthy=yes",
        "--verify-timeout",
        "1",
        "--wait",
        BROKEN,
        code=1,
    )
    assert "UPDATE_FAILED" in failed.stdout + failed.stderr
    helpers.wait_for_status(heat, apps[BROKEN], "ROLLBACK_COMPLETE")
    assert _output(heat, apps[BROKEN], "version") == OLD
    assert _physical(heat, apps[BROKEN]) == before

    # A signal check answered by ``stack verdict``.
    _osc(
        dep,
        "stack",
        "update",
        "--existing",
        "--parameter",
        "php_version=5.4.48",
        "--verify-signal",
        "app-00",
    )
    stack = polling.until(
        lambda: (
            (s := heat.stacks.get(apps["app-00"], resolve_outputs=False))
            and "verif" in (s.stack_status_reason or "").lower()
            and s
        ),
        what="app-00 verifying",
    )
    assert stack.stack_status == "UPDATE_IN_PROGRESS"
    _osc(dep, "stack", "verdict", apps["app-00"], "--pass")
    helpers.wait_for_status(heat, apps["app-00"], "UPDATE_COMPLETE")
    assert _output(heat, apps["app-00"], "version") == "5.4.48"

    # On create: a JSON value (true) compared as JSON.
    tmpl = helpers.template(
        {"a": {"type": "OS::Heat::None"}},
        outputs={"ok": {"value": True}},
    )
    path = dep.workdir + "/ok.yaml"
    with open(path, "w") as f:
        json.dump(tmpl, f)
    _osc(
        dep,
        "stack",
        "create",
        "-t",
        path,
        "--verify-output",
        "ok=true",
        "verified",
    )
    stack = helpers.wait_for_status(heat, "verified", "CREATE_COMPLETE")
    assert (
        "verif"
        in " ".join(
            e.resource_status_reason or "" for e in heat.events.list(stack.id)
        ).lower()
    )


@pytest.fixture(scope="module")
def rb_apps(heat):
    """Two more applications on OLD, for the tests below (the ones above
    leave APPS on versions of their own)."""
    ids = [
        helpers.create(heat, name, app_template())
        for name in ("rb-00", "rb-01")
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def test_rollout_rollback_wait_prints_only_new_lines(dep, heat, rb_apps):
    """``rollback --wait`` after ``create --wait``: the rollback's own
    progress, not again the lines the create printed."""
    created, forward = _json(
        _osc(
            dep,
            "stack",
            "rollout",
            "create",
            "rb",
            "--match-name",
            "rb-*",
            "--parameter",
            "php_version=" + NEW,
            "--verify-output",
            "healthy=yes",
            "--verify-timeout",
            "5",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        )
    )
    assert created["status"] == "COMPLETE", created
    back, lines = _json(
        _osc(
            dep,
            "stack",
            "rollout",
            "rollback",
            "rb",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        )
    )
    assert back["status"] == "CANCELLED", back
    assert _nonzero(back["counts"]) == {"ROLLED_BACK": 2}
    assert set(lines) & set(forward) == set(), (forward, lines)
    assert len(lines) == len(set(lines)), lines
    assert lines[0].startswith("rollout rb IN_PROGRESS"), lines
    assert lines[-1].startswith("rollout rb CANCELLED"), lines
    for name in ("rb-00", "rb-01"):
        assert any(
            line.startswith("  %s ROLLED_BACK" % name) for line in lines
        )
    for stack_id in rb_apps:
        assert _output(heat, stack_id, "version") == OLD


def _promotion(dep, promotion_id):
    url = "%s/promotions/%s" % (dep.endpoint(), promotion_id)
    return requests.get(url, headers=HEADERS, timeout=30).json()["promotion"]


def _stack_names(heat):
    return [s.stack_name for s in heat.stacks.list()]


def test_rolling_back_a_promotion_that_made_its_target_asks(
    dep, heat, rb_apps
):
    made, _ = _json(
        _osc(
            dep,
            "stack",
            "promote",
            "rb-00",
            "rb-copy",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        )
    )
    assert made["status"] == "COMPLETE", made
    assert made["target"]["created"] is True
    # No terminal to ask on (a script): refused, nothing done.
    refused = _osc(dep, "stack", "promotion", "rollback", made["id"], code=1)
    assert "will delete stack rb-copy" in refused.stderr
    assert "--yes" in refused.stderr
    assert "Traceback" not in refused.stderr
    # A terminal: the question, and "n" keeps everything.
    master, terminal = pty.openpty()
    try:
        os.write(master, b"n\n")
        declined = _osc(
            dep,
            "stack",
            "promotion",
            "rollback",
            made["id"],
            code=1,
            stdin=terminal,
        )
    finally:
        os.close(terminal)
        os.close(master)
    assert (
        "Rolling back promotion %s will delete stack rb-copy" % made["id"]
        in declined.stderr
    )
    assert "[y/N]" in declined.stderr
    assert "Not confirmed" in declined.stderr
    assert _promotion(dep, made["id"])["status"] == "COMPLETE"
    assert "rb-copy" in _stack_names(heat)
    # --yes: rolled back without a question, the stack it made deleted.
    back, _ = _json(
        _osc(
            dep,
            "stack",
            "promotion",
            "rollback",
            made["id"],
            "--yes",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        )
    )
    assert back["status"] == "ROLLED_BACK", back
    assert "rb-copy" not in _stack_names(heat)


def test_promote_dry_run_against_the_api(dep, heat, rb_apps):
    """``stack promote --dry-run`` against heat_lite's own
    ``POST .../promotions/preview``: what would change, and nothing
    changes. (Needs the preview's server side, from another branch.)"""
    target = helpers.create(
        heat,
        "rb-target",
        app_template(),
        parameters={"php_version": "5.4.0"},
        environment={"parameter_defaults": {"replace": True}},
    )
    helpers.wait_for_status(heat, target, "CREATE_COMPLETE")
    before = _physical(heat, target)
    args = (
        "stack",
        "promote",
        "rb-01",
        "rb-target",
        "--parameter",
        "php_version=5.4.99",
        "--dry-run",
    )
    shown, _ = _json(_osc(dep, *args, "-f", "json"))
    assert shown["source"]["stack"] == "rb-01"
    assert shown["source"]["id"] == rb_apps[1]
    assert shown["target"]["id"] == target
    assert shown["target"]["exists"] is True
    assert shown["parameters"]["php_version"] == {
        "current": "5.4.0",
        "promoted": "5.4.99",
    }
    # The target's own overlay, which the promotion does not carry over.
    assert shown["dropped"]["parameter_defaults"] == {"replace": True}
    assert "db" in shown["resources"]["unchanged"]
    table = _osc(dep, *args, "--max-width", "0").stdout
    assert "php_version: 5.4.0 -> 5.4.99" in table
    assert "parameter_defaults: replace = true" in table
    # Nothing changed: no promotion, the target as it was.
    listed = requests.get(
        dep.endpoint() + "/promotions", headers=HEADERS, timeout=30
    ).json()["promotions"]
    assert all(p["target"]["stack_id"] != target for p in listed)
    assert _physical(heat, target) == before
    assert _output(heat, target, "version") == "5.4.0"
