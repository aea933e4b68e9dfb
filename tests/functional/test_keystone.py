"""heat_lite with ``auth_strategy = keystone`` against a real Keystone:
users of two projects drive it with ``openstack ... stack`` (password
auth, endpoint from the catalog) and with python-heatclient on a
keystoneauth password session; tokens decide the project, policy the
roles, and project B never reaches project A's stacks. OS::Heat::Stack,
with no credentials of its own, acts in the remote cloud as the user who
started the operation, on every backend."""

import hashlib
import hmac
import json
import os

import pytest
import requests
import yaml
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from harness import helpers, osc, polling
from tests.functional import conftest, keystone_env
from tests.functional.test_api_isolation import TMPL, check_matrix


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    keystone_env.available()
    keystone = keystone_env.Keystone(tmp_path_factory.mktemp("keystone"))
    keystone.start()
    dep = None
    try:
        dep = keystone_env.deployment(
            keystone, "sqlite", tmp_path_factory.mktemp("heat-ks")
        )
        keystone.register_heat(dep.url)
        projects = {
            "alpha": keystone.add_user("ua", "alpha", "member"),
            "beta": keystone.add_user("ub", "beta", "member"),
        }
        keystone.add_user("ur", "alpha", "reader")
        dep.start()
        yield keystone, dep, projects
    finally:
        if dep is not None:
            dep.stop()
        keystone.stop()


@pytest.fixture(scope="module", params=conftest.KINDS)
def any_cloud(request, cloud, tmp_path_factory):
    """``cloud`` on SQLite; on PostgreSQL and MariaDB another heat_lite
    (API and two engines over RabbitMQ) against the same Keystone."""
    if request.param == "sqlite":
        yield cloud
        return
    keystone, _dep, projects = cloud
    dep = keystone_env.deployment(
        keystone,
        request.param,
        tmp_path_factory.mktemp("heat-ks-" + request.param),
    )
    try:
        yield keystone, dep.start(), projects
    finally:
        dep.stop()


def _heat(keystone, user, project):
    return heat_client.Client("1", session=keystone.session(user, project))


def _token(keystone, user, project):
    return keystone.session(user, project).get_token()


def _osc(keystone, user, project, *args):
    cmd = [
        "--os-auth-url",
        keystone.url + "/v3",
        "--os-identity-api-version",
        "3",
        "--os-username",
        user,
        "--os-password",
        keystone_env.PASSWORD,
        "--os-project-name",
        project,
        "--os-user-domain-id",
        "default",
        "--os-project-domain-id",
        "default",
        *args,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    # One CLI process answers every user's commands (harness.osc): each
    # must act as its own user, none as the one before.
    result = osc.run(cmd, env=env, timeout=300)
    assert result.returncode == 0, "%s\n%s%s" % (
        " ".join(args),
        result.stdout,
        result.stderr,
    )
    return result.stdout


def test_openstack_cli_with_keystone(cloud, tmp_path):
    keystone, dep, projects = cloud
    path = os.path.join(tmp_path, "t.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(TMPL, f)
    out = _osc(
        keystone,
        "ua",
        "alpha",
        "stack",
        "create",
        "-t",
        path,
        "--wait",
        "cli-ks",
        "-f",
        "json",
    )
    assert (
        json.loads(out[out.index("{") :])["stack_status"] == "CREATE_COMPLETE"
    )
    listed = json.loads(
        _osc(keystone, "ua", "alpha", "stack", "list", "-f", "json")
    )
    assert [s["Stack Name"] for s in listed] == ["cli-ks"]
    out = json.loads(
        _osc(
            keystone,
            "ua",
            "alpha",
            "stack",
            "output",
            "show",
            "cli-ks",
            "out",
            "-f",
            "json",
        )
    )
    assert out["output_value"] == "x"
    assert (
        json.loads(_osc(keystone, "ub", "beta", "stack", "list", "-f", "json"))
        == []
    )
    _osc(keystone, "ua", "alpha", "stack", "delete", "-y", "--wait", "cli-ks")


def test_tokens_projects_and_roles(cloud):
    keystone, dep, projects = cloud
    alice = _heat(keystone, "ua", "alpha")
    stack_id = helpers.create(alice, "ks-private", TMPL)
    stack = helpers.wait_for_status(alice, stack_id, "CREATE_COMPLETE")
    assert stack.stack_owner == "ua"  # the user's name, as Heat shows it
    event_id = list(alice.events.list(stack_id, resource_name="a"))[0].id
    config = alice.software_configs.create(name="ks-config", config="x")

    # No token, a bad token: 401 with Heat's error body.
    url = "%s/v1/%s/stacks" % (dep.url, projects["alpha"])
    for headers in ({}, {"X-Auth-Token": "garbage"}):
        response = requests.get(url, headers=headers)
        assert response.status_code == 401
        assert response.headers["Content-Type"].startswith("application/json")
    # B's token on A's project URL: 403 on every route.
    bob_token = {"X-Auth-Token": _token(keystone, "ub", "beta")}
    response = requests.get(url, headers=bob_token)
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "InvalidTenant"
    response = requests.get(
        "%s/ks-private/%s" % (url, stack_id), headers=bob_token
    )
    assert response.status_code == 403
    # B's token on B's project URL with A's names and ids: 404.
    failures = check_matrix(
        "%s/v1/%s" % (dep.url, projects["beta"]),
        projects["alpha"],
        "ks-private",
        stack_id,
        event_id,
        bob_token,
        config.id,
    )
    assert failures == []
    bob = _heat(keystone, "ub", "beta")
    assert list(bob.stacks.list()) == []
    assert bob.software_configs.list() == []
    assert alice.software_configs.get(config.id).config == "x"

    # A reader of alpha reads and changes nothing.
    reader = _heat(keystone, "ur", "alpha")
    assert [s.id for s in reader.stacks.list()] == [stack_id]
    assert (
        reader.resources.get(stack_id, "a").resource_status
        == "CREATE_COMPLETE"
    )
    for call in (
        lambda: reader.stacks.delete(stack_id),
        lambda: reader.actions.check(stack_id),
        lambda: helpers.create(reader, "nope", TMPL),
    ):
        with pytest.raises(heat_exc.HTTPForbidden):
            call()
    with pytest.raises(heat_exc.HTTPForbidden):
        list(alice.stacks.list(global_tenant=True))

    # The admin sees every project with global_tenant, and may act in
    # another project's URL.
    admin = _heat(keystone, "admin", "admin")
    every = list(admin.stacks.list(global_tenant=True))
    assert stack_id in [s.id for s in every]
    admin_token = {"X-Auth-Token": _token(keystone, "admin", "admin")}
    response = requests.get(
        "%s/ks-private/%s" % (url, stack_id), headers=admin_token
    )
    assert response.status_code == 200

    alice.stacks.delete(stack_id)
    helpers.wait_for_status(alice, stack_id, "DELETE_COMPLETE")


REMOTE_TMPL = helpers.template(
    {
        "v": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "value"}},
        }
    },
    outputs={"out": {"value": {"get_attr": ["v", "output"]}}},
    parameters={"value": {"type": "string"}},
)


def _remote_template(value):
    return helpers.template(
        {
            "far": {
                "type": "OS::Heat::Stack",
                "properties": {
                    "template": json.dumps(REMOTE_TMPL),
                    "timeout": 10,
                    "parameters": {"value": value},
                },
            }
        },
        outputs={"out": {"value": {"get_attr": ["far", "outputs", "out"]}}},
    )


def test_remote_stack_acts_with_the_callers_token(any_cloud):
    """No [remote_stack] credentials are configured: the remote stack
    exists, is owned by the caller and the caller's project, and follows
    the local one, only because the caller's token reached the plugin."""
    keystone, dep, projects = any_cloud
    session = keystone.session("ua", "alpha")
    alice = heat_client.Client(
        "1", session=session, endpoint_override=dep.endpoint(projects["alpha"])
    )
    stack_id = helpers.create(
        alice, "ks-far-" + dep.kind, _remote_template("one")
    )
    stack = helpers.wait_for_status(alice, stack_id, "CREATE_COMPLETE")
    remote_id = alice.resources.get(stack_id, "far").physical_resource_id
    remote = alice.stacks.get(remote_id)
    assert remote.stack_status == "CREATE_COMPLETE"
    assert remote.stack_owner == "ua" == stack.stack_owner
    assert remote.stack_user_project_id == projects["alpha"]
    assert remote.parent is None  # a stack of its own, made over HTTP
    outputs = {
        o["output_key"]: o["output_value"]
        for o in alice.stacks.get(stack_id).outputs
    }
    assert outputs == {"out": "one"}
    # The live ``show`` attribute is read with the token of its reader.
    shown = alice.resources.get(stack_id, "far", with_attr=["show"])
    assert shown.attributes["show"]["id"] == remote_id
    # Another project's user does not see it.
    bob = heat_client.Client(
        "1",
        session=keystone.session("ub", "beta"),
        endpoint_override=dep.endpoint(projects["beta"]),
    )
    with pytest.raises(heat_exc.HTTPNotFound):
        bob.stacks.get(remote_id)

    alice.stacks.update(stack_id, template=_remote_template("two"))
    helpers.wait_for_status(alice, stack_id, "UPDATE_COMPLETE")
    assert alice.stacks.get(remote_id).stack_status == "UPDATE_COMPLETE"
    outputs = {
        o["output_key"]: o["output_value"]
        for o in alice.stacks.get(stack_id).outputs
    }
    assert outputs == {"out": "two"}

    alice.stacks.delete(stack_id)
    helpers.wait_for_status(alice, stack_id, "DELETE_COMPLETE")
    helpers.wait_for_status(alice, remote_id, "DELETE_COMPLETE")


def _grant(keystone, user, project_id, role):
    ks = keystone.admin()
    found = ks.users.list(name=user)[0]
    ks.roles.grant(ks.roles.list(name=role)[0], user=found, project=project_id)


def test_cross_project_promotion_needs_the_role_in_both(cloud):
    """``promotions:create_cross_project`` (admin by default) is checked
    with the caller's roles in the source project (its token) and in the
    target project (its token rescoped there)."""
    keystone, dep, projects = cloud
    alice = _heat(keystone, "ua", "alpha")
    stack_id = helpers.create(alice, "ks-app", TMPL)
    helpers.wait_for_status(alice, stack_id, "CREATE_COMPLETE")
    url = "%s/v1/%s/promotions" % (dep.url, projects["alpha"])
    body = {
        "source": {"stack": "ks-app"},
        "target": {"stack": "ks-app-prod", "project": projects["beta"]},
    }
    keystone.add_user("half", "alpha", "admin")  # no role on beta
    keystone.add_user("mixed", "alpha", "admin")
    _grant(keystone, "mixed", projects["beta"], "member")
    keystone.add_user("release", "alpha", "admin")
    _grant(keystone, "release", projects["beta"], "admin")
    for user, why in (
        ("ua", "create_cross_project"),
        ("half", "no role on project"),
        ("mixed", "create_cross_project"),
    ):
        token = {"X-Auth-Token": _token(keystone, user, "alpha")}
        refused = requests.post(url, json=body, headers=token, timeout=60)
        assert refused.status_code == 403, (user, refused.text)
        assert why in refused.json()["error"]["message"], user
    token = {"X-Auth-Token": _token(keystone, "release", "alpha")}
    made = requests.post(url, json=body, headers=token, timeout=60)
    assert made.status_code == 201, made.text
    promotion_id = made.json()["promotion"]["id"]

    def finished():
        shown = requests.get(
            url + "/" + promotion_id, headers=token, timeout=60
        ).json()["promotion"]
        return shown if shown["status"] != "IN_PROGRESS" else None

    done = polling.until(finished, 120, "promotion finished")
    assert done["status"] == "COMPLETE", done["status_reason"]
    bob = _heat(keystone, "ub", "beta")
    prod = bob.stacks.get(done["target"]["stack_id"])
    assert prod.stack_name == "ks-app-prod"
    assert prod.promoted_from["promotion_id"] == promotion_id
    # Seen from beta too, never from a third project.
    listed = bob.http_client.get("/promotions").json()["promotions"]
    assert [p["id"] for p in listed] == [promotion_id]
    bob.stacks.delete(prod.id)
    helpers.wait_for_status(bob, prod.id, "DELETE_COMPLETE")
    alice.stacks.delete(stack_id)
    helpers.wait_for_status(alice, stack_id, "DELETE_COMPLETE")


def test_the_webhook_is_the_one_route_without_a_token(cloud):
    """A git server posts without a token: the signature is checked, a
    token (even a bad one) changes nothing; every other app route still
    needs a token of the URL's project, and its policy."""
    keystone, dep, projects = cloud
    alpha = "%s/v1/%s/apps" % (dep.url, projects["alpha"])
    alice = {"X-Auth-Token": _token(keystone, "ua", "alpha")}
    secret = "the webhook secret of ks-shop"
    made = requests.post(
        alpha,
        json={
            "name": "ks-shop",
            "source": {"url": "file:///srv/git/ks-shop", "branches": ["main"]},
            "builder": {"name": "artifact"},
            "template": {
                "heat_template_version": "2021-04-16",
                "parameters": {"image": {"type": "string"}},
            },
            "image_parameter": "image",
            "webhook_secret": secret,
        },
        headers=alice,
        timeout=60,
    )
    assert made.status_code == 201, made.text
    body = json.dumps(
        {"ref": "refs/heads/main", "before": "0" * 40, "after": "a" * 40}
    ).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    delivery = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-Hub-Signature-256": "sha256=" + signature,
    }
    hook = alpha + "/ks-shop/webhook"
    for n, extra in enumerate(({}, {"X-Auth-Token": "garbage"})):
        headers = dict(delivery, **extra)
        headers["X-GitHub-Delivery"] = "ks-%d" % n
        answer = requests.post(hook, data=body, headers=headers, timeout=60)
        assert answer.status_code == 202, answer.text
    forged = dict(delivery, **{"X-Hub-Signature-256": "sha256=" + "0" * 64})
    answer = requests.post(hook, data=body, headers=forged, timeout=60)
    assert answer.status_code == 401 and "error" in answer.json()
    # Every other route of the app: a token, of the URL's project.
    for method, path in (
        ("GET", "/ks-shop/builds"),
        ("POST", "/ks-shop/pushes"),
        ("GET", "/ks-shop/webhook"),
    ):
        refused = requests.request(method, alpha + path, timeout=60)
        assert refused.status_code == 401, (method, path, refused.text)
    bob = {"X-Auth-Token": _token(keystone, "ub", "beta")}
    answer = requests.get(alpha + "/ks-shop/builds", headers=bob, timeout=60)
    assert answer.status_code == 403
    reader = {"X-Auth-Token": _token(keystone, "ur", "alpha")}
    push = {"ref": "refs/heads/main", "commit": "b" * 40}
    answer = requests.post(
        alpha + "/ks-shop/pushes", json=push, headers=reader, timeout=60
    )
    assert answer.status_code == 403
    answer = requests.post(
        alpha + "/ks-shop/pushes", json=push, headers=alice, timeout=60
    )
    assert answer.status_code == 202, answer.text
    listed = requests.get(
        alpha + "/ks-shop/builds", headers=alice, timeout=60
    ).json()["builds"]
    sources = sorted(b["source"] for b in listed)
    assert sources == ["push", "webhook", "webhook"]
