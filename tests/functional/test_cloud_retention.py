"""Image retention against the test cloud's real Glance (issue 30.3).

A heat-lite-all (noauth, SQLite) acting in the cloud as ``demo`` runs the
retention pass every second. Images are made in Glance as a build would
make them (with ``heat_lite_build``) and recorded in the deployment's
database the way builds record them; then: an image an app's template
names stays visible; an unneeded image of an app whose policy deletes at
once is hidden, then deleted from Glance; an unneeded image under the
default policy (hide) is hidden and stays; once something names it again
it is shown again; an image heat_lite did not build is never touched.
With stacks whose servers boot managed images, while passes run: a stack
rolled back finds its old image, a promotion rolled back finds its
image, a snapshot keeps its image and restores, and an image shared from
another project and named by name is kept for the project naming it.
"""

import io
import os
import uuid

import pytest
import requests

from harness import cloud as cloud_mod
from harness import databases, helpers, polling
from harness import deployment as deployment_mod
from heat_lite.common.states import IMAGE
from heat_lite.db import (
    image_events,
    image_holds,
    image_moves,
    image_needs,
    managed_images,
)
from heat_lite.resources import test_resource
from tests.functional.test_apps import _api

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(900),
]
PROJECT = "demo"
RETENTION = """
[retention]
interval = 1
mode = hide
keep_last = 0
"""


@pytest.fixture(scope="module")
def heat(cloud, tmp_path_factory):
    work = tmp_path_factory.mktemp("cloud-retention")
    dep = deployment_mod.Deployment(
        "sqlite",
        work / "dep",
        extra_conf=cloud.heat_conf("demo")
        + "\n[apps]\nallowed_sources = file:///srv/git/*\n"
        + RETENTION,
    )
    os.makedirs(dep.workdir)
    try:
        dep.start()
        with databases.attached("sqlite:///%s/heat_lite.sqlite" % dep.workdir):
            yield dep
    finally:
        dep.stop()


@pytest.fixture(scope="module")
def glance(cloud):
    return cloud.connect("demo").image


def _glance_image(glance, built=True, name=None):
    properties = {"heat_lite_build": str(uuid.uuid4())} if built else {}
    image = glance.create_image(
        name=name or "ret-" + uuid.uuid4().hex[:6],
        disk_format="raw",
        container_format="bare",
        data=io.BytesIO(b"\0" * 1024),
        **properties,
    )
    return image.id


def _managed(image_id, app_id=None, name="ret"):
    managed_images.image_add(
        {"id": image_id, "tenant": PROJECT, "app_id": app_id, "name": name}
    )


def _app(heat, retention):
    made = _api(
        heat,
        PROJECT,
        "POST",
        body={
            "name": "ret-" + uuid.uuid4().hex[:6],
            "source": {"url": "file:///srv/git/x", "branches": ["main"]},
            "builder": {"name": "artifact"},
            "template": {
                "heat_template_version": "2021-04-16",
                "parameters": {"image": {"type": "string"}},
            },
            "image_parameter": "image",
            "retention": retention,
        },
    )
    assert made.status_code == 201, made.text
    return made.json()["app"]["id"]


def _hidden(glance, image_id):
    return glance.get_image(image_id).is_hidden


def _state(image_id):
    return managed_images.image_get(PROJECT, image_id)["state"]


def test_retention_against_glance(heat, glance):
    app_id = _app(heat, {"mode": "delete", "grace": 0, "keep_last": 0})
    kept = _glance_image(glance)
    doomed = _glance_image(glance)
    hidden = _glance_image(glance)
    foreign = _glance_image(glance, built=False)
    _managed(kept, app_id)
    _managed(doomed, app_id)
    _managed(hidden)
    image_holds.use(PROJECT, [kept], kind="app", holder=app_id)

    # The app's policy deletes at once: hidden, then gone from Glance.
    polling.until(lambda: _state(doomed) == IMAGE.DELETED, 120, "deleted")
    with pytest.raises(Exception) as gone:
        glance.get_image(doomed)
    assert "404" in str(gone.value) or "NotFound" in type(gone.value).__name__
    # The default (hide) hides and keeps it.
    polling.until(lambda: _state(hidden) == IMAGE.HIDDEN, 60, "hidden")
    polling.until(lambda: _hidden(glance, hidden), 60, "hidden in Glance")
    assert not _hidden(glance, kept) and _state(kept) == IMAGE.NEEDED
    assert not _hidden(glance, foreign)
    # heat_lite's view says why.
    listed = requests.get(
        heat.endpoint(PROJECT) + "/images",
        headers={"X-Auth-User": "dev"},
        timeout=60,
    ).json()["images"]
    by_id = {i["id"]: i for i in listed}
    assert by_id[kept]["kept_by"] == [{"kind": "app", "holder": app_id}]
    assert by_id[hidden]["state"] == IMAGE.HIDDEN
    assert foreign not in by_id

    # Named again (a promotion, say): shown again by the next pass.
    assert image_holds.use(
        PROJECT, [hidden], kind="promotion", holder="p1"
    ) == [hidden]
    polling.until(lambda: not _hidden(glance, hidden), 60, "shown again")
    assert _state(hidden) == IMAGE.NEEDED


def _server_template(cloud, image):
    return helpers.template(
        {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": image,
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            }
        }
    )


def _stack_on(heat, cloud, image):
    """A new stack whose server boots ``image``: (client, stack id)."""
    client = heat.client(PROJECT)
    stack_id = client.stacks.create(
        stack_name="ret-" + uuid.uuid4().hex[:6],
        template=_server_template(cloud, image),
    )["stack"]["id"]
    helpers.wait_for_status(client, stack_id, "CREATE_COMPLETE", timeout=180)
    return client, stack_id


def _engine_log(heat):
    with open(heat.log_path("all"), errors="replace") as log:
        return log.read()


def _hidden_by_a_pass(glance, name=None):
    """An image heat_lite built (named ``name`` in Glance and in its
    row), hidden by a pass."""
    image = _glance_image(glance, name=name)
    _managed(image, name=name or "ret")  # no app: the policy hides it
    polling.until(
        lambda: (
            managed_images.image_get(PROJECT, image)["hidden_at"] is not None
        ),
        120,
        "hidden by a pass",
    )
    assert _hidden(glance, image) and _state(image) == IMAGE.HIDDEN
    return image


def test_hidden_image_shown_before_the_server_uses_it(heat, glance, cloud):
    """An image a pass hid, named again by a stack's server: the engine
    shows it in Glance and records it before Nova is asked for the
    server, not at the next pass."""
    image = _hidden_by_a_pass(glance)

    # A new server naming it (an update in place naming it: below).
    client, stack_id = _stack_on(heat, cloud, image)

    assert not _hidden(glance, image)
    row = managed_images.image_get(PROJECT, image)
    assert row["state"] == IMAGE.NEEDED and row["hidden_at"] is None
    # The worker showed it (the pass would not log this line).
    assert "Image %s of project %s shown again for its use" % (
        image,
        PROJECT,
    ) in _engine_log(heat)
    # The image's history, as the API and ``--why`` show it.
    shown = requests.get(
        heat.endpoint(PROJECT) + "/images/" + image,
        headers={"X-Auth-User": "dev"},
        timeout=60,
    ).json()["image"]
    actions = [e["action"] for e in reversed(shown["events"])]
    assert actions == ["hidden", "revived"], shown["events"]
    assert shown["events"][0]["reason"] == "named again by a use"
    server = cloud.connect("demo").compute.get_server(
        cloud_mod.physical(client, stack_id)["server"]
    )
    assert server.image["id"] == image
    client.stacks.delete(stack_id)
    helpers.wait_for_status(client, stack_id, "DELETE_COMPLETE", timeout=180)


def _server_stack(heat, glance, cloud):
    """A stack whose server boots a managed image: (client, stack id,
    server id, image id)."""
    image = _glance_image(glance)
    _managed(image)
    client, stack_id = _stack_on(heat, cloud, image)
    server_id = cloud_mod.physical(client, stack_id)["server"]
    return client, stack_id, server_id, image


@pytest.mark.parametrize("by_name", [False, True], ids=["by id", "by name"])
def test_hidden_image_shown_before_an_update_in_place_uses_it(
    heat, glance, cloud, by_name
):
    """A stack's server rebuilt in place (``image_update_policy``
    REBUILD, Heat's default) onto an image a pass hid: the worker reads
    the update's new properties, so the image is NEEDED again, shown in
    Glance and its event written before Nova rebuilds the server; the
    server keeps its id.

    By name too: Glance's list omits hidden images, but openstacksdk's
    ``find_image`` (what the glance.image constraint, the worker's
    reference and the rebuild resolve a name with) asks again with
    ``os_hidden=true``, so the update is accepted and revives it."""
    client, stack_id, server_id, before = _server_stack(heat, glance, cloud)
    name = "ret-hidden-" + uuid.uuid4().hex[:6]
    image = _hidden_by_a_pass(glance, name=name)
    assert list(glance.images(name=name)) == []  # Glance lists it not

    named = name if by_name else image
    client.stacks.update(stack_id, template=_server_template(cloud, named))
    helpers.wait_for_status(client, stack_id, "UPDATE_COMPLETE", timeout=300)

    assert cloud_mod.physical(client, stack_id)["server"] == server_id
    server = cloud.connect("demo").compute.get_server(server_id)
    assert server.image["id"] == image
    assert not _hidden(glance, image)
    row = managed_images.image_get(PROJECT, image)
    assert row["state"] == IMAGE.NEEDED and row["hidden_at"] is None
    events = image_events.image_events(PROJECT, image_id=image)
    assert [e["action"] for e in reversed(events)] == ["hidden", "revived"]
    assert events[0]["reason"] == "named again by a use"
    # The record names the new image only now; the old one is no
    # longer kept by it (the pass may hide it from now on).
    why = image_needs.needed([image, before], lambda app: 0)
    assert [r["kind"] for r in why[image]] == ["record"]
    assert why[before] == []
    client.stacks.delete(stack_id)
    helpers.wait_for_status(client, stack_id, "DELETE_COMPLETE", timeout=180)


def test_an_update_in_place_onto_a_retired_image_fails_before_nova(
    heat, glance, cloud
):
    """The other order: the pass moved the image to DELETING before the
    update's use. The use finds it retired and fails the update under
    the record's lease, before Nova is asked to rebuild the server."""
    client, stack_id, server_id, before = _server_stack(heat, glance, cloud)
    image = _hidden_by_a_pass(glance)
    row = managed_images.image_get(PROJECT, image)
    assert image_moves.move(
        image, row["generation"], IMAGE.HIDDEN, IMAGE.DELETING
    )

    client.stacks.update(stack_id, template=_server_template(cloud, image))
    helpers.wait_for_status(client, stack_id, "UPDATE_FAILED", timeout=180)

    [server] = client.resources.list(stack_id)
    assert "retired by heat_lite's image retention" in (
        server.resource_status_reason
    )
    assert server.physical_resource_id == server_id
    nova = cloud.connect("demo").compute.get_server(server_id)
    assert nova.image["id"] == before
    assert _state(image) in (IMAGE.DELETING, IMAGE.DELETED)
    client.stacks.delete(stack_id)
    helpers.wait_for_status(client, stack_id, "DELETE_COMPLETE", timeout=180)


def _shared_by_admin(cloud, glance, prefix):
    """(admin's image proxy, name, id) of an image project ``admin``
    built (``heat_lite_build``) and shared with ``demo``, who accepted
    it."""
    owner = cloud.connect("admin").image
    name = prefix + uuid.uuid4().hex[:6]
    shared = owner.create_image(
        name=name,
        disk_format="raw",
        container_format="bare",
        data=io.BytesIO(b"\0" * 1024),
        visibility="shared",
        heat_lite_build=str(uuid.uuid4()),
    ).id
    member = cloud.connect("demo").current_project_id
    owner.add_member(shared, member_id=member)
    glance.update_member(member, shared, status="accepted")
    return owner, name, shared


def test_an_image_shared_from_another_project_is_kept_for_this_one(
    heat, glance, cloud
):
    """An image of project ``admin`` heat_lite built, shared with
    ``demo`` and named *by name* by a server of demo's stack: the worker
    resolves the name as the server's create does (Glance's find_image
    as demo), so the record keeps the image of the other project; passes
    run (a sentinel of demo's is hidden meanwhile) and it stays NEEDED,
    shown in Glance."""
    owner, name, shared = _shared_by_admin(cloud, glance, "ret-shared-")
    # Held (by its app, say) until demo's server names it: this
    # deployment acts in the cloud as demo, who may not hide admin's
    # image (heat_lite acts for the app that built an image, which in
    # keystone mode is its owner's trust).
    managed_images.image_add({"id": shared, "tenant": "admin", "name": name})
    image_holds.use("admin", [shared], kind="app", holder="owner-app")
    try:
        client, stack_id = _stack_on(heat, cloud, name)
        assert image_holds.release("app", "owner-app") == 1
        sentinel = _hidden_by_a_pass(glance)  # passes ran since

        row = managed_images.image_get("admin", shared)
        assert row["state"] == IMAGE.NEEDED, row
        [why] = image_needs.needed([shared], lambda app: 0)[shared]
        assert (why["kind"], why["stack_id"]) == ("record", stack_id)
        assert not owner.get_image(shared).is_hidden
        assert _state(sentinel) == IMAGE.HIDDEN
        client.stacks.delete(stack_id)
        helpers.wait_for_status(
            client, stack_id, "DELETE_COMPLETE", timeout=180
        )
    finally:
        owner.delete_image(shared, ignore_missing=True)


def test_an_app_naming_a_shared_image_by_name_keeps_it(heat, glance, cloud):
    """An app of ``demo`` whose template's image default is the *name*
    of an image project ``admin`` built and shared with demo: the app's
    create looks the name up in Glance as the app (here: demo) sees it,
    so the app keeps admin's image; deleting the app lets it go."""
    owner, name, shared = _shared_by_admin(cloud, glance, "ret-app-shared-")
    managed_images.image_add({"id": shared, "tenant": "admin", "name": name})
    try:
        made = _api(
            heat,
            PROJECT,
            "POST",
            body={
                "name": "ret-" + uuid.uuid4().hex[:6],
                "source": {"url": "file:///srv/git/x", "branches": ["main"]},
                "builder": {"name": "artifact"},
                "template": {
                    "heat_template_version": "2021-04-16",
                    "parameters": {
                        "image": {"type": "string", "default": name}
                    },
                },
                "image_parameter": "image",
            },
        )
        assert made.status_code == 201, made.text
        app_id = made.json()["app"]["id"]
        why = image_needs.needed([shared], lambda app: 0)[shared]
        assert [(r["kind"], r["holder"]) for r in why] == [("app", app_id)]
        deleted = _api(heat, PROJECT, "DELETE", "/" + app_id)
        assert deleted.status_code == 204, deleted.text
        assert image_needs.needed([shared], lambda app: 0)[shared] == []
    finally:
        owner.delete_image(shared, ignore_missing=True)


def _gated_template(cloud, image, fail):
    """A server on ``image`` and, after it, a gate that waits while its
    hold file exists and then fails if ``fail``."""
    tmpl = _server_template(cloud, image)
    tmpl["resources"]["gate"] = {
        "type": "OS::Heat::TestResource",
        "depends_on": "server",
        "properties": {"value": image, "fail": fail, "hold": "gate"},
    }
    return tmpl


def _resource_status(client, stack_id, name):
    return client.resources.get(stack_id, name).resource_status


def test_a_stack_rolled_back_after_passes_finds_its_old_image(
    heat, glance, cloud
):
    """A stack's update rebuilds its server in place onto a new image,
    then fails (its gate, held meanwhile) and rolls back. While it can
    roll back, passes keep the old image (held for the stack's rollback:
    NEEDED, never hidden); the rollback rebuilds the server onto it; once
    the stack settled, the image it rolled back off is retired."""
    old, new = _glance_image(glance), _glance_image(glance)
    _managed(old)
    _managed(new)
    client = heat.client(PROJECT)
    stack_id = client.stacks.create(
        stack_name="ret-" + uuid.uuid4().hex[:6],
        template=_gated_template(cloud, old, False),
        disable_rollback=False,
    )["stack"]["id"]
    helpers.wait_for_status(client, stack_id, "CREATE_COMPLETE", timeout=180)
    server_id = cloud_mod.physical(client, stack_id)["server"]
    hold = test_resource.hold_path(heat.ledger, "gate")
    open(hold, "w").close()
    try:
        client.stacks.update(
            stack_id,
            template=_gated_template(cloud, new, True),
            disable_rollback=False,
        )
        polling.until(
            lambda: (
                _resource_status(client, stack_id, "server")
                == "UPDATE_COMPLETE"
                and _resource_status(client, stack_id, "gate")
                == "UPDATE_IN_PROGRESS"
            ),
            180,
            "the server rebuilt, the gate held",
        )
        sentinel = _hidden_by_a_pass(glance)  # passes ran meanwhile
        assert _state(sentinel) == IMAGE.HIDDEN
        assert _state(old) == IMAGE.NEEDED and not _hidden(glance, old)
        why = image_needs.needed([old], lambda app: 0)[old]
        assert why == [{"kind": "rollback", "holder": stack_id}]
    finally:
        os.unlink(hold)
    helpers.wait_for_status(client, stack_id, "ROLLBACK_COMPLETE", timeout=300)

    assert cloud_mod.physical(client, stack_id)["server"] == server_id
    server = cloud.connect("demo").compute.get_server(server_id)
    assert server.image["id"] == old
    assert image_events.image_events(PROJECT, image_id=old) == []
    # Settled: the image it rolled back off goes (this module hides).
    polling.until(lambda: _state(new) == IMAGE.HIDDEN, 120, "new hidden")
    assert _state(old) == IMAGE.NEEDED
    client.stacks.delete(stack_id)
    helpers.wait_for_status(client, stack_id, "DELETE_COMPLETE", timeout=180)


def test_a_snapshot_restores_with_its_image_kept(heat, glance, cloud):
    """A stack snapshotted on a managed image, then moved off it by an
    update in place: the snapshot keeps the image (passes run, it stays
    NEEDED and shown) and the restore onto the snapshot's template (which
    names it) completes; once the snapshot is deleted and the stack moved
    on, the image is retired."""
    old = _glance_image(glance)
    _managed(old)
    client, stack_id = _stack_on(heat, cloud, old)
    snapshot = client.stacks.snapshot(stack_id, "kept")["id"]
    polling.until(
        lambda: (
            client.stacks.snapshot_show(stack_id, snapshot)["snapshot"][
                "status"
            ]
            == "COMPLETE"
        ),
        180,
        "snapshot done",
    )
    new = _glance_image(glance)
    _managed(new)
    client.stacks.update(stack_id, template=_server_template(cloud, new))
    helpers.wait_for_status(client, stack_id, "UPDATE_COMPLETE", timeout=300)
    sentinel = _hidden_by_a_pass(glance)  # passes ran since
    assert _state(sentinel) == IMAGE.HIDDEN
    assert _state(old) == IMAGE.NEEDED and not _hidden(glance, old)
    assert image_needs.needed([old], lambda app: 0)[old] == [
        {"kind": "snapshot", "holder": snapshot}
    ]

    server_id = cloud_mod.physical(client, stack_id)["server"]
    client.stacks.restore(stack_id, snapshot)
    helpers.wait_for_status(client, stack_id, "RESTORE_COMPLETE", timeout=300)
    # Rebuilt from the server's snapshot image (Nova's, which retention
    # never touches); the snapshot still keeps the image it was taken on.
    assert cloud_mod.physical(client, stack_id)["server"] == server_id
    booted = cloud.connect("demo").compute.get_server(server_id).image["id"]
    assert booted not in (old, new)
    assert image_needs.needed([old], lambda app: 0)[old] == [
        {"kind": "snapshot", "holder": snapshot}
    ]
    # Moved on again and the snapshot deleted: nothing keeps it.
    client.stacks.update(stack_id, template=_server_template(cloud, new))
    helpers.wait_for_status(client, stack_id, "UPDATE_COMPLETE", timeout=300)
    client.stacks.snapshot_delete(stack_id, snapshot)
    polling.until(lambda: _state(old) == IMAGE.HIDDEN, 120, "old hidden")
    polling.until(lambda: _hidden(glance, old), 60, "hidden in Glance")
    client.stacks.delete(stack_id)
    helpers.wait_for_status(client, stack_id, "DELETE_COMPLETE", timeout=180)


def _promotions(heat, method, path="", body=None):
    response = requests.request(
        method,
        heat.endpoint(PROJECT) + "/promotions" + path,
        json=body,
        headers={"X-Auth-User": "dev"},
        timeout=60,
    )
    assert response.status_code in (200, 201), response.text
    return response.json().get("promotion")


def _promotion_ended(heat, promotion_id, status):
    """Wait until the promotion is ``status`` (or FAILED: an error)."""

    def ended():
        shown = _promotions(heat, "GET", "/" + promotion_id)
        return shown if shown["status"] in (status, "FAILED") else None

    shown = polling.until(ended, 300, "promotion %s" % status)
    assert shown["status"] == status, shown
    return shown


def test_a_promotion_rolled_back_finds_its_image(heat, glance, cloud):
    """A promotion rebuilds its target's server in place onto the
    source's image. While the promotion can roll back, passes keep the
    target's previous image (held by the promotion: NEEDED, shown); its
    rollback rebuilds the server onto it."""
    old, new = _glance_image(glance), _glance_image(glance)
    _managed(old)
    _managed(new)
    client, source = _stack_on(heat, cloud, new)
    _, target = _stack_on(heat, cloud, old)
    server_id = cloud_mod.physical(client, target)["server"]
    promotion = _promotions(
        heat,
        "POST",
        body={
            "source": {"stack": client.stacks.get(source).stack_name},
            "target": {"stack": client.stacks.get(target).stack_name},
        },
    )["id"]
    _promotion_ended(heat, promotion, "COMPLETE")
    nova = cloud.connect("demo").compute
    assert nova.get_server(server_id).image["id"] == new

    sentinel = _hidden_by_a_pass(glance)  # passes ran since
    assert _state(sentinel) == IMAGE.HIDDEN
    assert _state(old) == IMAGE.NEEDED and not _hidden(glance, old)
    assert image_needs.needed([old], lambda app: 0)[old] == [
        {"kind": "promotion", "holder": promotion}
    ]

    _promotions(heat, "POST", "/%s/actions" % promotion, {"rollback": None})
    _promotion_ended(heat, promotion, "ROLLED_BACK")
    helpers.wait_for_status(client, target, "UPDATE_COMPLETE", timeout=300)
    assert cloud_mod.physical(client, target)["server"] == server_id
    assert nova.get_server(server_id).image["id"] == old
    why = image_needs.needed([old], lambda app: 0)[old]
    assert [(r["kind"], r["stack_id"]) for r in why] == [("record", target)]
    for stack_id in (source, target):
        client.stacks.delete(stack_id)
    for stack_id in (source, target):
        helpers.wait_for_status(
            client, stack_id, "DELETE_COMPLETE", timeout=180
        )


def test_an_image_without_heat_lite_build_is_never_retired(heat, glance):
    """heat_lite's rows say an image is its own, unneeded, under a policy
    that deletes at once, but Glance's record lacks ``heat_lite_build``
    (never ours, or the property was removed): the image store refuses
    to hide or delete it, pass after pass; a sentinel of the same policy
    is deleted meanwhile."""
    app_id = _app(heat, {"mode": "delete", "grace": 0, "keep_last": 0})
    stranger = _glance_image(glance, built=False)
    sentinel = _glance_image(glance)
    _managed(stranger, app_id)
    _managed(sentinel, app_id)
    polling.until(lambda: _state(sentinel) == IMAGE.DELETED, 120, "deleted")
    image = glance.get_image(stranger)
    assert image.status == "active" and not image.is_hidden
    row = managed_images.image_get(PROJECT, stranger)
    assert row["state"] == IMAGE.HIDDEN and row["hidden_at"] is None


def test_a_deletion_glance_refuses_is_retried_later(heat, glance):
    """A protected image under a policy that deletes at once: Glance
    refuses the delete (403), the row stays DELETING with Glance's words
    and a ``delete_failed`` event; once unprotected, a later pass
    deletes it."""
    app_id = _app(heat, {"mode": "delete", "grace": 0, "keep_last": 0})
    image = _glance_image(glance)
    glance.update_image(image, is_protected=True)
    _managed(image, app_id)
    try:
        polling.until(
            lambda: managed_images.image_get(PROJECT, image)["last_error"],
            120,
            "a refused delete",
        )
        row = managed_images.image_get(PROJECT, image)
        assert row["state"] == IMAGE.DELETING
        assert glance.get_image(image).status == "active"
        actions = [
            e["action"] for e in image_events.image_events(PROJECT, image)
        ]
        assert "delete_failed" in actions
    finally:
        glance.update_image(image, is_protected=False)
    polling.until(lambda: _state(image) == IMAGE.DELETED, 120, "deleted")
    assert glance.find_image(image, ignore_missing=True) is None
