"""keystone mode against the test cloud: an app's builds act as the
app's creator through the app's Keystone trust (issue 29).

heat_lite runs as ``test_cloud_trusts`` runs it (``heat-lite-api`` behind
keystonemiddleware, ``heat-lite-engine --workers 2`` on PostgreSQL, the
cloud's ``heat`` user as trustee, no ``[openstack]`` cloud), with a real
bare git repository as the app's source. A non-admin user creates the app
with a token that is then revoked; a push (stored as the engine topic
stores a webhook's: no token at all) is built, uploaded to Glance and
deployed to a new stack whose server boots, and a second push updates
it -- all of it in the user's project, as the user, through the app's
trust, which the stack borrows.
Deleting the app deletes that trust: the stack it made lives on with a
trust of its own, which its own delete then deletes.
"""

import os
import uuid

import pytest
import requests
import sqlalchemy as sa

from harness import databases, git_repo, helpers
from harness import deployment as deployment_mod
from heat_lite.common.states import BuildStatus as B
from tests.functional.test_cloud_apps import VERIFY
from tests.functional.test_cloud_trusts import User, _conf, _revoke, _trusts

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
]
# The command builder makes a small qcow2 image (the cloud boots anything).
COMMAND = "sh -c 'exec qemu-img create -q -f qcow2 \"$$HEAT_LITE_OUTPUT\" 16M'"


def _db_url(dep):
    with open(dep.config) as f:
        return next(
            line.split(" = ", 1)[1].strip()
            for line in f
            if line.startswith("connection = ")
        )


@pytest.fixture(scope="module")
def admin_sdk(cloud):
    conn = cloud.connect("admin")
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def app_heat(cloud, tmp_path_factory):
    """heat_lite in keystone mode with trusts, building apps."""
    work = tmp_path_factory.mktemp("app-trusts")
    repos = work / "repos"
    repos.mkdir()
    extra = _conf(cloud.layout) + (
        "\n[apps]\nallowed_sources = file://%s/*\n"
        "build_poll_interval = 0.2\ncommand_builder = %s\n" % (repos, COMMAND)
    )
    dep = deployment_mod.Deployment(
        "postgresql", work / "dep", extra_conf=extra
    )
    dep.repos = repos
    os.makedirs(dep.workdir)
    try:
        dep.start()
        with databases.attached(_db_url(dep)):
            yield dep
    finally:
        dep.stop()


def _apps(user, method, path="", token=None, body=None):
    return requests.request(
        method,
        user.dep.endpoint(user.project) + "/apps" + path,
        json=body,
        headers={"X-Auth-Token": token or user.token()},
        timeout=60,
    )


def _stored_trust(dep, stack_id):
    engine = sa.create_engine(_db_url(dep))
    try:
        with engine.connect() as conn:
            return conn.execute(
                sa.text("SELECT trust_id FROM stack WHERE id = :id"),
                {"id": stack_id},
            ).scalar()
    finally:
        engine.dispose()


def test_builds_act_as_the_apps_creator_after_its_token_is_revoked(
    cloud, app_heat, admin_sdk
):
    user = User(cloud, app_heat, admin_sdk)
    repo = git_repo.BareRepo(app_heat.repos / uuid.uuid4().hex[:8])
    name = "trusted-app"
    images = []
    heat = None
    try:
        first = user.token()
        made = _apps(
            user,
            "POST",
            token=first,
            body={
                "name": name,
                "source": {"url": repo.url, "branches": ["main"]},
                "builder": {"name": "command"},
                "template": git_repo.server_template(cloud),
                "image_parameter": "image",
                "verify": VERIFY,
            },
        )
        assert made.status_code == 201, made.text
        app_id = made.json()["app"]["id"]
        _revoke(admin_sdk, first)
        trusts = _trusts(admin_sdk, user.id)
        assert len(trusts) == 1 and trusts[0]["impersonation"] is True
        app_trust = trusts[0]["id"]

        app = {"id": app_id, "tenant": user.project,
               "spec": {"builder": {"name": "command"}}}  # fmt: skip
        build = git_repo.queue_build(app, repo.push({"index.html": "v1\n"}))
        done = git_repo.finished_build(user.project, build)
        assert done["status"] == B.DEPLOYED, done
        image_id = done["image_id"]
        images.append(image_id)
        image = admin_sdk.image.get_image(image_id)
        assert image.status == "active" and image.owner == user.project

        heat = user.heat(user.token())
        stack = heat.stacks.get("%s-main" % name)
        assert stack.stack_status == "CREATE_COMPLETE"
        server_id = heat.resources.get(stack.id, "server").physical_resource_id
        server = admin_sdk.compute.get_server(server_id)
        assert (server.project_id, server.user_id) == (user.project, user.id)
        assert server.image["id"] == image_id
        # The stack borrowed the app's trust: still only that one.
        assert [t["id"] for t in _trusts(admin_sdk, user.id)] == [app_trust]
        stored = _stored_trust(app_heat, stack.id)
        assert stored.startswith("borrowed:") and app_trust not in stored

        # A second push: a verified update of the stack, through the
        # same trust.
        second = git_repo.queue_build(app, repo.push({"index.html": "v2\n"}))
        done2 = git_repo.finished_build(user.project, second)
        assert done2["status"] == B.DEPLOYED, done2
        images.append(done2["image_id"])
        stack = heat.stacks.get(stack.id)
        assert stack.stack_status == "UPDATE_COMPLETE"
        server_id = heat.resources.get(stack.id, "server").physical_resource_id
        server = admin_sdk.compute.get_server(server_id)
        assert server.image["id"] == done2["image_id"]
        assert server.user_id == user.id
        assert [t["id"] for t in _trusts(admin_sdk, user.id)] == [app_trust]

        gone = _apps(user, "DELETE", "/" + app_id)
        assert gone.status_code == 204, gone.text
        # The app's trust is gone; the stack got one of its own.
        left = [t["id"] for t in _trusts(admin_sdk, user.id)]
        assert len(left) == 1 and left != [app_trust]
        assert not _stored_trust(app_heat, stack.id).startswith("borrowed:")

        heat = user.heat(user.token())
        heat.stacks.delete(stack.id)
        helpers.wait_for_status(heat, stack.id, "DELETE_COMPLETE", timeout=120)
        assert _trusts(admin_sdk, user.id) == []
    finally:
        if heat is not None:
            for left_stack in heat.stacks.list():
                heat.stacks.delete(left_stack.id)
        for made_image in images:
            admin_sdk.image.delete_image(made_image, ignore_missing=True)
        admin_sdk.identity.delete_user(user.id)
