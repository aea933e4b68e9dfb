"""App builds against the test cloud (real Glance, real Nova), issue 29.

A heat-lite-all (noauth, SQLite) acting in the cloud as ``demo``, with a
real bare git repository on disk as the app's source (``file://``, which
its ``[apps] allowed_sources`` allows). Apps are made over the REST API;
pushes are stored as the engine topic stores them (a QUEUED build, in
the deployment's database) and the builder workers of heat-lite-all
pick them up: fetch the commit, build (``filesystem``: mkfs.ext4 and
qemu-img; ``artifact``: Glance's web-download of a URL), the image active
in Glance with the build's properties, the branch's stack created with
a server booted from it and verified; a second push updates it; a push
whose verification fails is REJECTED and the stack is back on the
previous image; ten queued pushes deploy only the newest.
"""

import os
import signal
import uuid

import pytest
import requests

from harness import databases, git_repo, polling
from harness import deployment as deployment_mod
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import builds as db_builds
from tests.functional.test_apps import _api

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
]
PROJECT = "demo"
VERIFY = {"timeout": 5, "checks": [{"type": "output", "output": "healthy",
                                    "equals": True}]}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A loopback HTTP server of a directory (the artifact's image)."""
    image = git_repo.ServedImage(tmp_path_factory.mktemp("artifacts"), "16M")
    yield image.base
    image.close()


@pytest.fixture(scope="module")
def heat(cloud, tmp_path_factory):
    """heat-lite-all acting as demo, builds from tmp git repositories."""
    work = tmp_path_factory.mktemp("cloud-apps")
    repos = work / "repos"
    repos.mkdir()
    go = work / "go"
    # The command builder waits for ``go``: a test holds a build in
    # BUILDING (no clock raced).
    command = (
        "sh -c 'while [ ! -e %s ]; do sleep 0.2; done; "
        'exec qemu-img create -q -f qcow2 "$$HEAT_LITE_OUTPUT" 16M\'' % go
    )
    extra = cloud.heat_conf("demo") + (
        "\n[apps]\nallowed_sources = file://%s/*\n"
        "allowed_artifact_urls = http://127.0.0.1:*/*\n"
        "build_poll_interval = 0.2\ncommand_builder = %s\n" % (repos, command)
    )
    dep = deployment_mod.Deployment("sqlite", work / "dep", extra_conf=extra)
    os.makedirs(dep.workdir)
    dep.repos = repos
    dep.go = go
    try:
        dep.start()
        url = "sqlite:///%s/heat_lite.sqlite" % dep.workdir
        with databases.attached(url):
            yield dep
    finally:
        dep.stop()


@pytest.fixture
def repo(heat):
    return git_repo.BareRepo(heat.repos / uuid.uuid4().hex[:8])


def _app(heat, cloud, repo, name, builder, verify=VERIFY):
    made = _api(
        heat,
        PROJECT,
        "POST",
        body={
            "name": name,
            "source": {"url": repo.url, "branches": ["main"]},
            "builder": builder,
            "template": git_repo.server_template(cloud),
            "image_parameter": "image",
            "verify": verify,
        },
    )
    assert made.status_code == 201, made.text
    app = made.json()["app"]
    return {"id": app["id"], "tenant": PROJECT, "name": name,
            "spec": {"builder": builder}}  # fmt: skip


def _finished(build, timeout=300):
    return git_repo.finished_build(PROJECT, build, timeout)


def _log_with(build, text):
    log = db_builds.build_log_read(build["id"])[0]
    return log if text in log else None


def _stack(heat, name):
    return requests.get(
        heat.endpoint(PROJECT) + "/stacks/" + name,
        headers={"X-Auth-User": "dev"},
        allow_redirects=True,
        timeout=60,
    ).json()["stack"]


def _server_image(heat, cloud_sdk, name):
    stack = _stack(heat, name)
    resources = requests.get(
        heat.endpoint(PROJECT)
        + "/stacks/%s/%s/resources" % (name, stack["id"]),
        headers={"X-Auth-User": "dev"},
        timeout=60,
    ).json()["resources"]
    server_id = resources[0]["physical_resource_id"]
    return cloud_sdk.compute.get_server(server_id).image["id"]


def _cleanup(heat, cloud_sdk, app, builds):
    requests.delete(
        heat.endpoint(PROJECT) + "/stacks/%s-main" % app["name"],
        headers={"X-Auth-User": "dev"},
        timeout=60,
    )
    for build in builds:
        image_id = db_builds.build_get(PROJECT, app["id"], build["id"])[
            "image_id"
        ]
        if image_id:
            cloud_sdk.image.delete_image(image_id, ignore_missing=True)


def test_filesystem_builds_deploy_update_and_reject(
    heat, cloud, cloud_sdk, repo
):
    app = _app(heat, cloud, repo, "fsapp", {"name": "filesystem"})
    builds = []
    try:
        first = git_repo.queue_build(app, repo.push({"index.html": "v1\n"}))
        builds.append(first)
        done = _finished(first)
        assert done["status"] == B.DEPLOYED, done
        image = cloud_sdk.image.get_image(done["image_id"])
        assert image.status == "active" and image.disk_format == "qcow2"
        props = image.properties
        assert props["heat_lite_app"] == app["id"]
        assert props["heat_lite_build"] == first["id"]
        assert props["source_ref"] == "refs/heads/main"
        assert props["source_commit"] == first["commit"]
        stack = _stack(heat, "fsapp-main")
        assert stack["stack_status"] == "CREATE_COMPLETE"
        assert stack["parameters"]["source_commit"] == first["commit"]
        assert _server_image(heat, cloud_sdk, "fsapp-main") == image.id

        second = git_repo.queue_build(app, repo.push({"index.html": "v2\n"}))
        builds.append(second)
        done2 = _finished(second)
        assert done2["status"] == B.DEPLOYED, done2
        assert _stack(heat, "fsapp-main")["stack_status"] == "UPDATE_COMPLETE"
        assert (
            _server_image(heat, cloud_sdk, "fsapp-main") == done2["image_id"]
        )

        bad = repo.push({"index.html": "broken\n"})
        patched = _api(
            heat, PROJECT, "PATCH", "/" + app["id"],
            body={"environment": {"parameters": {"broken_commit": bad}}},
        )  # fmt: skip
        assert patched.status_code == 200, patched.text
        third = git_repo.queue_build(app, bad)
        builds.append(third)
        rejected = _finished(third)
        assert rejected["status"] == B.REJECTED, rejected
        assert "healthy" in rejected["status_reason"]
        stack = _stack(heat, "fsapp-main")
        assert stack["stack_status"] == "ROLLBACK_COMPLETE", stack
        assert stack["parameters"]["source_commit"] == second["commit"]
        assert (
            _server_image(heat, cloud_sdk, "fsapp-main") == done2["image_id"]
        )
    finally:
        _cleanup(heat, cloud_sdk, app, builds)


def test_ten_queued_pushes_deploy_only_the_newest(
    heat, cloud, cloud_sdk, repo
):
    app = _app(heat, cloud, repo, "burst", {"name": "filesystem"}, None)
    commits = [repo.push({"n": "%d\n" % i}) for i in range(10)]
    builds = [git_repo.queue_build(app, c) for c in commits]
    try:
        newest = _finished(builds[-1])
        assert newest["status"] == B.DEPLOYED, newest
        rows = [_finished(b) for b in builds[:-1]]
        assert {r["status"] for r in rows} == {B.SUPERSEDED}
        # A superseded build's image (if it made one) is deleted.
        made = [
            i.id
            for i in cloud_sdk.image.images()
            if i.properties.get("heat_lite_app") == app["id"]
        ]
        assert made == [newest["image_id"]]
        stack = _stack(heat, "burst-main")
        assert stack["parameters"]["source_commit"] == commits[-1]
    finally:
        _cleanup(heat, cloud_sdk, app, builds)


def test_artifact_build_is_imported_by_glance(
    heat, cloud, cloud_sdk, repo, served
):
    builder = {
        "name": "artifact",
        "options": {"image_url": served + "/app.qcow2"},
    }
    app = _app(heat, cloud, repo, "artapp", builder, None)
    build = git_repo.queue_build(app, repo.push({"README": "x\n"}))
    try:
        done = _finished(build)
        assert done["status"] == B.DEPLOYED, done
        image = cloud_sdk.image.get_image(done["image_id"])
        assert image.status == "active"
        assert image.properties["source_commit"] == build["commit"]
        assert _server_image(heat, cloud_sdk, "artapp-main") == image.id
    finally:
        _cleanup(heat, cloud_sdk, app, [build])


def test_kill_9_of_the_engine_mid_build_finishes_it_once(
    heat, cloud, cloud_sdk, repo
):
    app = _app(heat, cloud, repo, "killed", {"name": "command"}, None)
    build = git_repo.queue_build(app, repo.push({"a": "1\n"}))
    try:
        polling.until(
            lambda: "command: sh" in db_builds.build_log_read(build["id"])[0],
            120,
            "the command builder running",
        )
        proc = heat.procs["all"]
        os.killpg(proc.pid, signal.SIGKILL)  # the engine and its command
        proc.wait()
        before = db_builds.build_get(PROJECT, app["id"], build["id"])
        assert before["status"] == B.BUILDING, before
        heat._spawn("all", "heat-lite-all")
        heat._wait_for_api()
        heat.go.touch()
        done = _finished(build)
        assert done["status"] == B.DEPLOYED, done
        assert done["epoch"] > before["epoch"]
        made = [
            i.id
            for i in cloud_sdk.image.images()
            if i.properties.get("heat_lite_build") == build["id"]
        ]
        assert made == [done["image_id"]]
        # The final line is written just after the final state.
        log = polling.until(
            lambda: _log_with(build, "build DEPLOYED"), 30, "the final line"
        )
        assert log.count("command: sh") == 2  # built again, once
        assert log.count("build DEPLOYED") == 1
    finally:
        heat.go.unlink(missing_ok=True)
        _cleanup(heat, cloud_sdk, app, [build])
