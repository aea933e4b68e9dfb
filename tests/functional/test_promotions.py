"""Promotion, the seed's scenario 2, on PostgreSQL + RabbitMQ (an API
and two engines): ten tested application stacks promoted at once into a
prod project with an overlay; the gate fails for one, whose prod stack
stays exactly as it was (same physical IDs) while the others are
promoted; provenance, the one-step rollback and its 409, the refusals;
the ``openstack stack promote|promotion ...|references`` commands; and
which values are still referenced across an update and a rollback; and
the engine running a promotion killed (kill -9) mid-gate."""

import json
import os
import signal
import uuid

import pytest
import requests

from harness import databases, helpers, polling
from harness import deployment as deployment_mod
from heat_lite.db import image_holds, managed_images
from tests.functional import test_osc_plugin as osc_plugin
from tests.functional.test_chaos_engines import _query
from tests.functional.test_cloud_app_trusts import _db_url
from tests.unit.engine.test_rollouts import NEW, OLD, app_template

APPS = ["app%02d" % i for i in range(10)]
BROKEN = "app03"  # its prod overlay breaks the app: the gate fails
CREATED = "app09"  # no prod stack yet: the promotion creates it
GATE = {
    "timeout": 15,
    "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
}
ADMIN = {"X-Auth-User": "release"}


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "postgresql", tmp_path_factory.mktemp("promotions")
    )


@pytest.fixture(scope="module")
def projects():
    suffix = uuid.uuid4().hex[:6]
    return "test-" + suffix, "prod-" + suffix


def _api(dep, project, method, path, body=None, headers=ADMIN):
    return requests.request(
        method,
        dep.endpoint(project) + path,
        json=body,
        headers=headers,
        timeout=60,
    )


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _params(heat, stack_id):
    return heat.stacks.environment(stack_id)["parameters"]


def _rollback(dep, project, promotion_id):
    return _api(
        dep,
        project,
        "POST",
        "/promotions/%s/actions" % promotion_id,
        {"rollback": None},
    )


def _kept_by(dep, project, image_id):
    shown = _api(dep, project, "GET", "/images/" + image_id)
    assert shown.status_code == 200, shown.text
    return shown.json()["image"]["kept_by"]


def _finished(dep, project, promotion_id, timeout=180):
    def look():
        shown = _api(dep, project, "GET", "/promotions/" + promotion_id)
        assert shown.status_code == 200, shown.text
        promotion = shown.json()["promotion"]
        return promotion if promotion["status"] != "IN_PROGRESS" else None

    return polling.until(look, timeout, "promotion %s ended" % promotion_id)


@pytest.fixture(scope="module")
def apps(dep, projects):
    test, prod = projects
    heat_test, heat_prod = dep.client(test), dep.client(prod)
    ids = {}
    for name in APPS:
        ids[name] = helpers.create(
            heat_test,
            name + "-test",
            app_template(),
            parameters={"php_version": NEW, "replace": True},
        )
        if name != CREATED:
            ids[name + "-prod"] = helpers.create(
                heat_prod, name + "-prod", app_template()
            )
    for name, stack_id in ids.items():
        heat = heat_prod if name.endswith("-prod") else heat_test
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def _promote(dep, test, prod, name, **overlay):
    body = {
        "source": {"stack": name + "-test"},
        "target": {"stack": name + "-prod", "project": prod},
        "parameters": dict(overlay),
        "environment": {"parameter_defaults": {"replace": True}},
        "verify": GATE,
    }
    return _api(dep, test, "POST", "/promotions", body)


def test_ten_apps_promoted_into_prod_one_gate_fails(dep, projects, apps):
    test, prod = projects
    heat_prod = dep.client(prod)
    before = _physical(heat_prod, apps[BROKEN + "-prod"])
    made = {}
    for name in APPS:
        overlay = {"broken_on": NEW} if name == BROKEN else {}
        response = _promote(dep, test, prod, name, **overlay)
        assert response.status_code == 201, response.text
        made[name] = response.json()["promotion"]
        assert made[name]["status"] == "IN_PROGRESS"
    done = {n: _finished(dep, test, p["id"]) for n, p in made.items()}
    for name, promotion in done.items():
        if name == BROKEN:
            assert promotion["status"] == "FAILED"
            assert "gate failed" in promotion["status_reason"]
            assert "healthy" in promotion["status_reason"]
            continue
        assert promotion["status"] == "COMPLETE", promotion["status_reason"]
        target = promotion["target"]
        assert target["project"] == prod
        assert target["created"] is (name == CREATED)
        params = _params(heat_prod, target["stack_id"])
        assert params["php_version"] == NEW
        assert heat_prod.stacks.environment(target["stack_id"])[
            "parameter_defaults"
        ] == {"replace": True}
    # The failed one: exactly as it was.
    broken = apps[BROKEN + "-prod"]
    assert _physical(heat_prod, broken) == before
    assert _params(heat_prod, broken).get("php_version", OLD) == OLD
    stack = heat_prod.stacks.get(broken)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert stack.promoted_from is None
    # Provenance of a promoted one, from the prod project.
    promoted = heat_prod.stacks.get(apps["app00-prod"])
    assert promoted.promoted_from["promotion_id"] == made["app00"]["id"]
    assert promoted.promoted_from["stack_name"] == "app00-test"
    assert promoted.promoted_from["project"] == test
    history = _api(
        dep,
        prod,
        "GET",
        "/stacks/app00-prod/%s/promotions" % apps["app00-prod"],
    )
    assert history.status_code == 200
    assert [p["id"] for p in history.json()["promotions"]] == [
        made["app00"]["id"]
    ]
    listed = _api(dep, prod, "GET", "/promotions").json()["promotions"]
    assert {p["id"] for p in listed} == {p["id"] for p in made.values()}
    # The same list a page at a time (limit + marker), and bad paging.
    paged, marker = [], None
    while True:
        query = "?limit=2" + ("&marker=%s" % marker if marker else "")
        page = _api(dep, prod, "GET", "/promotions" + query)
        assert page.status_code == 200, page.text
        ids = [p["id"] for p in page.json()["promotions"]]
        paged += ids
        if len(ids) < 2:
            break
        marker = ids[-1]
    assert paged == [p["id"] for p in listed]
    for query in ("?limit=x", "?limit=-1", "?marker=%s" % uuid.uuid4()):
        refused = _api(dep, prod, "GET", "/promotions" + query)
        assert refused.status_code == 400, (query, refused.text)
        assert refused.json()["error"]["type"]


def test_rollback_of_one_promotion(dep, projects, apps):
    test, prod = projects
    heat_prod = dep.client(prod)
    stack_id = apps["app01-prod"]
    first = _finished(dep, test, _promotion_of(dep, prod, stack_id)["id"])
    # An image the first keeps for its rollback (as it would if the
    # target's records named one: these stacks name no image).
    held = str(uuid.uuid4())
    with databases.attached(_db_url(dep)):
        managed_images.image_add({"id": held, "tenant": prod, "name": "held"})
        image_holds.use(prod, [held], kind="promotion", holder=first["id"])
    assert _kept_by(dep, prod, held) == [
        {"kind": "promotion", "holder": first["id"]}
    ]
    # A newer promotion of the same target: the first can no longer go
    # back in one step (409), the newer can; the first's holds went at
    # the newer one's COMPLETE.
    newer = _promote(dep, test, prod, "app01", php_version="8.0")
    assert newer.status_code == 201, newer.text
    newer = _finished(dep, test, newer.json()["promotion"]["id"])
    assert newer["status"] == "COMPLETE", newer["status_reason"]
    assert _kept_by(dep, prod, held) == []
    assert _params(heat_prod, stack_id)["php_version"] == "8.0"
    refused = _rollback(dep, prod, first["id"])
    assert refused.status_code == 409, refused.text
    assert "newer promotion" in refused.json()["error"]["message"]
    back = _rollback(dep, prod, newer["id"])
    assert back.status_code == 200, back.text
    back = _finished(dep, test, newer["id"])
    assert back["status"] == "ROLLED_BACK", back["status_reason"]
    assert _params(heat_prod, stack_id)["php_version"] == NEW
    helpers.wait_for_status(heat_prod, stack_id, "UPDATE_COMPLETE")
    # Overtaken for good: only the newest promotion of a stack rolls back.
    refused = _rollback(dep, prod, first["id"])
    assert refused.status_code == 409, refused.text
    assert "newest promotion" in refused.json()["error"]["message"]
    history = _api(
        dep, prod, "GET", "/stacks/app01-prod/%s/promotions" % stack_id
    )
    assert [p["id"] for p in history.json()["promotions"]] == [
        newer["id"],
        first["id"],
    ]
    assert (
        heat_prod.stacks.get(stack_id).promoted_from["promotion_id"]
        == (first["id"])
    )
    # A FAILED promotion has nothing to undo.
    failed = _promotion_of(dep, prod, apps[BROKEN + "-prod"])
    again = _rollback(dep, prod, failed["id"])
    assert again.status_code == 409


def _promotion_of(dep, project, stack_id):
    listed = _api(dep, project, "GET", "/promotions").json()["promotions"]
    return [p for p in listed if p["target"]["stack_id"] == stack_id][-1]


def test_refusals(dep, projects, apps):
    test, prod = projects
    cases = [
        ({"source": {"stack": "nope"}, "target": {"stack": "x"}}, 404),
        (
            {
                "source": {"stack": "app02-test"},
                "target": {"stack": "x"},
                "parameters": {"undeclared": 1},
            },
            400,
        ),
        ({"source": {"stack": "app02-test"}, "bogus": 1}, 400),
        (
            {
                "source": {"stack": "app02-test"},
                "target": {"stack": "x"},
                "verify": {"checks": []},
            },
            400,
        ),
    ]
    for body, code in cases:
        response = _api(dep, test, "POST", "/promotions", body)
        assert response.status_code == code, (body, response.text)
        assert "error" in response.json()
    # A member of the test project may not promote into another one.
    member = {"X-Auth-User": "dev", "X-Roles": "member"}
    body = {
        "source": {"stack": "app02-test"},
        "target": {"stack": "app02-prod", "project": prod},
    }
    response = _api(dep, test, "POST", "/promotions", body, headers=member)
    assert response.status_code == 403, response.text
    assert "create_cross_project" in response.text
    # A busy target: 409, nothing changed.
    heat_prod = dep.client(prod)
    slow = app_template()
    slow["resources"]["app"]["properties"] = {"value": "x", "hold": "busy"}
    with helpers.holding(dep.ledger, "busy"):
        heat_prod.stacks.update(apps["app02-prod"], template=slow)
        response = _api(dep, test, "POST", "/promotions", body)
        assert response.status_code == 409, response.text
        heat_prod.actions.cancel_update(apps["app02-prod"])
    helpers.wait_for_status(heat_prod, apps["app02-prod"], "ROLLBACK_COMPLETE")
    # Nothing was stored for a refused request.
    listed = _api(dep, test, "GET", "/promotions").json()["promotions"]
    assert all(p["source"]["stack_name"] != "nope" for p in listed)


def _osc(dep, project, *args, code=0):
    return osc_plugin._osc(dep, *args, code=code, project=project)


def _json(out):
    start = min(i for i in (out.find("{"), out.find("[")) if i >= 0)
    return json.loads(out[start:]), out[:start].splitlines()


def test_openstack_stack_promote(dep, projects, apps, tmp_path):
    test, prod = projects
    env = tmp_path / "prod.yaml"
    env.write_text("parameter_defaults:\n  replace: true\n")
    shown, lines = _json(
        _osc(
            dep,
            test,
            "stack",
            "promote",
            "app05-test",
            "app05-copy",
            "--target-project",
            prod,
            "--parameter",
            "php_version=7.4",
            "-e",
            str(env),
            "--verify-output",
            "healthy=yes",
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        ).stdout
    )
    assert shown["status"] == "COMPLETE", shown
    assert shown["target"]["created"] is True
    assert any("COMPLETE" in line for line in lines)
    rows, _ = _json(
        _osc(dep, prod, "stack", "promotion", "list", "-f", "json").stdout
    )
    assert shown["id"] in [r["ID"] for r in rows]
    rows, _ = _json(
        _osc(
            dep,
            prod,
            "stack",
            "promotion",
            "list",
            "--stack",
            "app05-copy",
            "-f",
            "json",
        ).stdout
    )
    assert [r["ID"] for r in rows] == [shown["id"]]
    one, _ = _json(
        _osc(
            dep, test, "stack", "promotion", "show", shown["id"], "-f", "json"
        ).stdout
    )
    assert one["source"]["stack_name"] == "app05-test"
    assert (one["rolled_back"], one["overtaken_by"]) == (False, None), one
    back, _ = _json(
        _osc(
            dep,
            prod,
            "stack",
            "promotion",
            "rollback",
            shown["id"],
            "--yes",  # it deletes the stack it created: asked otherwise
            "--wait",
            "--poll",
            "0.3",
            "-f",
            "json",
        ).stdout
    )
    assert back["status"] == "ROLLED_BACK", back
    # The stack it created is gone.
    heat_prod = dep.client(prod)
    assert [s.stack_name for s in heat_prod.stacks.list()].count(
        "app05-copy"
    ) == 0
    # A failing gate: exit code 1.
    _osc(
        dep,
        test,
        "stack",
        "promote",
        "app06-test",
        "app06-prod",
        "--target-project",
        prod,
        "--parameter",
        "broken_on=%s" % NEW,
        "--verify-output",
        "healthy=yes",
        "--verify-timeout",
        "5",
        "--wait",
        "--poll",
        "0.3",
        code=1,
    )


def _references(dep, project):
    rows, _ = _json(
        _osc(
            dep,
            project,
            "stack",
            "references",
            "--type",
            "OS::Heat::TestResource",
            "--property",
            "value",
            "-f",
            "json",
        ).stdout
    )
    return {r["Value"]: (r["Current"], r["Retained"]) for r in rows}


def test_references_across_an_update_and_a_rollback(dep):
    project = "refs-" + uuid.uuid4().hex[:6]
    heat = dep.client(project)
    tmpl = app_template()
    ids = [
        helpers.create(heat, "r%d" % i, tmpl, parameters={"replace": True})
        for i in range(3)
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert _references(dep, project) == {OLD: (3, 0), "static": (3, 0)}
    # r0's update holds (it waits for a verdict): OLD only retained there.
    held = _api(
        dep,
        project,
        "PATCH",
        "/stacks/r0/%s" % ids[0],
        {
            "parameters": {"php_version": NEW},
            "verify": {"timeout": 120, "checks": [{"type": "signal"}]},
        },
    )
    assert held.status_code == 202, held.text

    def verifying():
        stack = heat.stacks.get(ids[0], resolve_outputs=False)
        return "verifying" in (stack.stack_status_reason or "")

    polling.until(verifying, 60, "r0 verifying")
    assert _references(dep, project) == {
        OLD: (2, 1),
        NEW: (1, 0),
        "static": (3, 0),
    }
    answer = _api(
        dep,
        project,
        "GET",
        "/references?type=OS::Heat::TestResource&property=value",
    )
    assert answer.status_code == 200
    row = [r for r in answer.json()["references"] if r["value"] == OLD][0]
    assert row == {"value": OLD, "stacks": 3, "current": 2, "retained": 1}
    # It fails: the rollback brings OLD back, NEW is referenced no more.
    _api(
        dep,
        project,
        "POST",
        "/stacks/r0/%s/verdict" % ids[0],
        {"status": "FAIL"},
    )
    helpers.wait_for_status(heat, ids[0], "ROLLBACK_COMPLETE")
    assert _references(dep, project) == {OLD: (3, 0), "static": (3, 0)}
    # Admins only across projects.
    member = {"X-Auth-User": "dev", "X-Roles": "member"}
    refused = _api(
        dep,
        project,
        "GET",
        "/references?type=x&property=y&all_projects=true",
        headers=member,
    )
    assert refused.status_code == 403
    assert _api(dep, project, "GET", "/references").status_code == 400


def test_the_engine_running_a_promotion_is_killed(dep, projects, apps):
    """kill -9 of the engine that owns a promotion while its gate waits
    for a verdict: another engine takes it over and follows the update it
    had started (no second update), and the verdict completes it."""
    test, prod = projects
    target = apps["app07-prod"]
    count = "SELECT count(*) FROM verification WHERE stack_id = '%s'" % target
    ((before,),) = _query(dep, count)
    signal_gate = {"timeout": 120, "checks": [{"type": "signal"}]}
    body = {
        "source": {"stack": "app07-test"},
        "target": {"stack": "app07-prod", "project": prod},
        "parameters": {"php_version": "9.9"},
        "verify": signal_gate,
    }
    made = _api(dep, test, "POST", "/promotions", body)
    assert made.status_code == 201, made.text
    promotion_id = made.json()["promotion"]["id"]
    heat_prod = dep.client(prod)

    def verifying():
        stack = heat_prod.stacks.get(target, resolve_outputs=False)
        return "verifying" in (stack.stack_status_reason or "")

    polling.until(verifying, 60, "the target verifying")
    owner = (
        "SELECT s.pid FROM promotion p JOIN service s ON "
        "s.engine_id = p.engine_id AND s.epoch = p.epoch "
        "WHERE p.id = '%s'" % promotion_id
    )
    ((pid,),) = _query(dep, owner)
    assert pid in dep.engine_pids()
    os.kill(pid, signal.SIGKILL)
    verdict = "/stacks/app07-prod/%s/verdict" % target

    def signalled():
        try:
            answer = _api(dep, prod, "POST", verdict, {"status": "PASS"})
        except requests.RequestException:
            return False
        return answer.status_code == 200

    polling.until(signalled, 60, "the verdict accepted")
    done = _finished(dep, test, promotion_id, timeout=150)
    assert done["status"] == "COMPLETE", done["status_reason"]
    ((now,),) = _query(dep, count)
    assert now == before + 1  # one update, followed by the new owner
    ((new_owner,),) = _query(dep, owner)
    assert new_owner != pid
    assert _params(heat_prod, target)["php_version"] == "9.9"
