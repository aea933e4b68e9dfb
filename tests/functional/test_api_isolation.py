"""Tenant isolation, route by route: project B never reaches project A's
stacks, resources, events, outputs, templates or software configs (404),
whatever the route, and its lists never show them. ``MATRIX`` is shared
with the keystone tests, which run it with real tokens."""

import uuid

import requests

from harness import helpers, polling

TMPL = helpers.template(
    {"a": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}},
    outputs={"out": {"value": {"get_attr": ["a", "output"]}}},
)
_UPDATE = {"template": TMPL}

# (method, path under /v1/<project>/stacks, body)
MATRIX = [
    ("GET", "/{name}", None),
    ("GET", "/{id}", None),
    ("DELETE", "/{name}", None),
    ("GET", "/arn:openstack:heat::{owner}:stacks/{name}/{id}", None),
    ("GET", "/{name}/resources", None),
    ("GET", "/{name}/{id}", None),
    ("PUT", "/{name}/{id}", _UPDATE),
    ("PATCH", "/{name}/{id}", {}),
    ("DELETE", "/{name}/{id}", None),
    ("PUT", "/{name}/{id}/preview", _UPDATE),
    ("PATCH", "/{name}/{id}/preview", {}),
    ("GET", "/{name}/{id}/template", None),
    ("GET", "/{name}/{id}/environment", None),
    ("GET", "/{name}/{id}/files", None),
    ("GET", "/{name}/{id}/outputs", None),
    ("GET", "/{name}/{id}/outputs/out", None),
    ("GET", "/{name}/{id}/export", None),
    ("DELETE", "/{name}/{id}/abandon", None),
    ("POST", "/{name}/{id}/actions", {"check": None}),
    ("POST", "/{name}/{id}/actions", {"cancel_update": None}),
    ("POST", "/{name}/{id}/actions", {"detect_drift": None}),
    ("GET", "/{name}/{id}/drift", None),
    ("POST", "/{name}/{id}/actions", {"update_semantics": "queue"}),
    ("GET", "/{name}/{id}/traversals", None),
    ("DELETE", "/{name}/{id}/traversals/{id}", None),
    ("GET", "/{name}/{id}/plans", None),
    ("POST", "/{name}/{id}/plans", _UPDATE),
    ("GET", "/{name}/{id}/plans/{id}", None),
    ("DELETE", "/{name}/{id}/plans/{id}", None),
    ("POST", "/{name}/{id}/plans/{id}/apply", {}),
    ("POST", "/{name}/{id}/verdict", {"status": "PASS"}),
    ("GET", "/{name}/{id}/snapshots", None),
    ("GET", "/{name}/{id}/resources", None),
    ("GET", "/{name}/{id}/resources/a", None),
    ("PATCH", "/{name}/{id}/resources/a", {"mark_unhealthy": True}),
    ("GET", "/{name}/{id}/resources/a/metadata", None),
    ("POST", "/{name}/{id}/resources/a/signal", {"x": 1}),
    ("GET", "/{name}/{id}/resources/a/versions", None),
    ("GET", "/{name}/{id}/resources/a/events", None),
    ("GET", "/{name}/{id}/resources/a/events/{event}", None),
    ("GET", "/{name}/{id}/events", None),
    ("GET", "/{name}/{id}/promotions", None),
]
# (method, path under /v1/<project>, body) of another project's config.
CONFIG_MATRIX = [
    ("GET", "/software_configs/{config}", None),
    ("DELETE", "/software_configs/{config}", None),
    ("GET", "/software_configs?marker={config}", None),
]
# (method, path under /v1/<project>, body) of another project's rollout.
ROLLOUT_MATRIX = [
    ("GET", "/rollouts/{rollout}", None),
    ("DELETE", "/rollouts/{rollout}", None),
    ("POST", "/rollouts/{rollout}/actions", {"pause": None}),
    ("POST", "/rollouts/{rollout}/actions", {"rollback": None}),
]
# (method, path under /v1/<project>, body) of another project's promotion.
PROMOTION_MATRIX = [
    ("GET", "/promotions/{promotion}", None),
    ("POST", "/promotions/{promotion}/actions", {"rollback": None}),
]
_PUSH = {"ref": "refs/heads/main", "commit": "1" * 40}
# (method, path under /v1/<project>, body) of another project's app
# (named "secret", as the stack).
APP_MATRIX = [
    ("GET", "/apps/{app}", None),
    ("GET", "/apps/secret", None),
    ("PATCH", "/apps/{app}", {"verify": None}),
    ("PATCH", "/apps/secret", {"verify": None}),
    ("DELETE", "/apps/{app}", None),
    ("DELETE", "/apps/secret", None),
    ("GET", "/apps?marker={app}", None),
    ("POST", "/apps/{app}/pushes", _PUSH),
    ("POST", "/apps/secret/pushes", _PUSH),
    ("GET", "/apps/{app}/builds", None),
    ("GET", "/apps/secret/builds", None),
    ("GET", "/apps/{app}/builds/{build}", None),
    ("GET", "/apps/{app}/builds/{build}/log", None),
    ("POST", "/apps/{app}/builds/{build}/actions", {"cancel": None}),
]
APP = {
    "name": "secret",
    "source": {"url": "file:///srv/git/secret", "branches": ["main"]},
    "builder": {"name": "artifact"},
    "template": {
        "heat_template_version": "2021-04-16",
        "parameters": {"image": {"type": "string"}},
    },
    "image_parameter": "image",
}


_REFS = "/references?type=OS::Heat::TestResource&property=value"


def check_matrix(
    endpoint,
    owner,
    name,
    stack_id,
    event_id,
    headers,
    config_id=None,
    rollout_id=None,
    promotion_id=None,
    app_id=None,
    build_id=None,
):
    """Run every MATRIX route (and, given ``config_id``, every
    CONFIG_MATRIX route) as the caller of ``endpoint``/``headers``
    against another project's stack; return the failures."""
    failures = []
    routes = [(m, "/stacks" + p, b) for m, p, b in MATRIX]
    if config_id:
        routes += CONFIG_MATRIX
    if rollout_id:
        routes += ROLLOUT_MATRIX
    if promotion_id:
        routes += PROMOTION_MATRIX
    if app_id:
        routes += APP_MATRIX
    for method, path, body in routes:
        url = endpoint + path.format(
            name=name,
            id=stack_id,
            owner=owner,
            event=event_id,
            config=config_id,
            rollout=rollout_id,
            promotion=promotion_id,
            app=app_id,
            build=build_id,
        )
        response = requests.request(
            method,
            url,
            json=body,
            headers=headers,
            allow_redirects=False,
            timeout=60,
        )
        # A marker of another project is as unknown as any (400).
        expected = 400 if "marker=" in path else 404
        if response.status_code != expected or "error" not in response.json():
            failures.append(
                (method, path, response.status_code, response.text[:200])
            )
    return failures


def test_project_b_never_sees_project_a(deployment, request):
    owner = "a" + uuid.uuid4().hex[:8]
    other = "b" + uuid.uuid4().hex[:8]
    alice = deployment.client(owner)
    request.addfinalizer(lambda: helpers.delete_all(alice))
    stack_id = helpers.create(alice, "secret", TMPL)
    helpers.wait_for_status(alice, stack_id, "CREATE_COMPLETE")
    event_id = list(alice.events.list(stack_id, resource_name="a"))[0].id
    config = alice.software_configs.create(name="secret", config="x")
    headers = {"X-Auth-User": "bob", "X-Roles": "member"}
    rollout = requests.post(
        deployment.endpoint(owner) + "/rollouts",
        json={
            "name": "secret",
            "selector": {"stack_name": "secret"},
            "update": {"parameters": {}},
            "verify": {
                "checks": [{"type": "output", "output": "out", "equals": "x"}]
            },
        },
        headers={"X-Auth-User": "alice"},
        timeout=60,
    )
    assert rollout.status_code == 201, rollout.text
    rollout_id = rollout.json()["rollout"]["id"]
    # Alice's rollout updates her stack once; let it finish first.
    polling.awhile(
        lambda: (
            requests.get(
                deployment.endpoint(owner) + "/rollouts/" + rollout_id,
                headers={"X-Auth-User": "alice"},
                timeout=60,
            ).json()["rollout"]["status"]
            != "IN_PROGRESS"
        ),
        60,
        0.2,
    )
    promotion = requests.post(
        deployment.endpoint(owner) + "/promotions",
        json={"source": {"stack": "secret"}, "target": {"stack": "copy"}},
        headers={"X-Auth-User": "alice"},
        timeout=60,
    )
    assert promotion.status_code == 201, promotion.text
    promotion_id = promotion.json()["promotion"]["id"]
    app = requests.post(
        deployment.endpoint(owner) + "/apps",
        json=APP,
        headers={"X-Auth-User": "alice"},
        timeout=60,
    )
    assert app.status_code == 201, app.text
    app_id = app.json()["app"]["id"]
    pushed = requests.post(
        deployment.endpoint(owner) + "/apps/secret/pushes",
        json=_PUSH,
        headers={"X-Auth-User": "alice"},
        timeout=60,
    )
    assert pushed.status_code == 202, pushed.text
    build_id = pushed.json()["build"]["id"]
    failures = check_matrix(
        deployment.endpoint(other),
        owner,
        "secret",
        stack_id,
        event_id,
        headers,
        config.id,
        rollout_id,
        promotion_id,
        app_id,
        build_id,
    )
    assert failures == []
    # B's URL naming A's app: the webhook says only "no" (401).
    for app_ref in (app_id, "secret"):
        hooked = requests.post(
            deployment.endpoint(other) + "/apps/%s/webhook" % app_ref,
            data=b"{}",
            headers={
                "Content-Type": "application/json",
                "X-GitHub-Event": "push",
                "X-Hub-Signature-256": "sha256=" + "0" * 64,
            },
            timeout=60,
        )
        assert hooked.status_code == 401, hooked.text
    for path, key in (
        ("/promotions", "promotions"),
        (_REFS, "references"),
        ("/apps", "apps"),
    ):
        seen = requests.get(
            deployment.endpoint(other) + path, headers=headers, timeout=60
        )
        assert seen.status_code == 200 and seen.json() == {key: []}
    # B cannot promote A's stack (it is not found in B's project).
    stolen = requests.post(
        deployment.endpoint(other) + "/promotions",
        json={"source": {"stack": "secret"}, "target": {"stack": "mine"}},
        headers=headers,
        timeout=60,
    )
    assert stolen.status_code == 404, stolen.text
    rollouts = requests.get(
        deployment.endpoint(other) + "/rollouts", headers=headers, timeout=60
    )
    assert rollouts.status_code == 200 and rollouts.json() == {"rollouts": []}
    # B's selector never matches A's stacks.
    theirs = requests.post(
        deployment.endpoint(other) + "/rollouts",
        json={
            "name": "steal",
            "selector": {"stack_name": "*"},
            "update": {"parameters": {}},
            "verify": {"checks": [{"type": "signal"}]},
        },
        headers=headers,
        timeout=60,
    )
    assert theirs.status_code == 400 and "matches no stack" in theirs.text
    query = requests.post(
        deployment.endpoint(other) + "/stacks/query",
        json={"selector": {"stack_name": "*"}},
        headers=headers,
        timeout=60,
    )
    assert query.status_code == 200 and query.json() == {"stacks": []}
    query = requests.post(
        deployment.endpoint(other) + "/stacks/query",
        json={"selector": {"stack_name": "*"}, "all_projects": True},
        headers=headers,
        timeout=60,
    )
    assert query.status_code == 403 and "error" in query.json()
    bob = deployment.client(other)
    assert list(bob.stacks.list()) == []
    assert list(bob.stacks.list(show_deleted=True, show_nested=True)) == []
    assert bob.software_configs.list() == []
    assert alice.software_configs.get(config.id).config == "x"
    # Nothing B tried changed A's stack.
    stack = alice.stacks.get(stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert alice.resources.get(stack_id, "a").resource_status in (
        "CREATE_COMPLETE",
        "UPDATE_COMPLETE",
    )
    shown = requests.get(
        deployment.endpoint(owner) + "/rollouts/" + rollout_id,
        headers={"X-Auth-User": "alice"},
        timeout=60,
    ).json()["rollout"]
    assert shown["status"] == "COMPLETE", shown["status_reason"]
    assert shown["counts"]["SKIPPED"] == 0
    # Nothing B tried changed A's app.
    mine = requests.get(
        deployment.endpoint(owner) + "/apps/" + app_id,
        headers={"X-Auth-User": "alice"},
        timeout=60,
    )
    assert mine.status_code == 200 and mine.json()["app"]["version"] == 1
    builds = requests.get(
        deployment.endpoint(owner) + "/apps/secret/builds",
        headers={"X-Auth-User": "alice"},
        timeout=60,
    ).json()["builds"]
    assert [b["id"] for b in builds] == [build_id]
    assert builds[0]["cancel_requested"] is False
    assert builds[0]["status"] != "CANCELLED"
    copy = requests.get(
        deployment.endpoint(owner) + "/promotions/" + promotion_id,
        headers={"X-Auth-User": "alice"},
        timeout=60,
    ).json()["promotion"]
    alice.stacks.delete(stack_id)
    helpers.wait_for_status(alice, stack_id, "DELETE_COMPLETE")
    helpers.wait_for_status(
        alice, copy["target"]["stack_id"], "CREATE_COMPLETE"
    )
    alice.stacks.delete(copy["target"]["stack_id"])
