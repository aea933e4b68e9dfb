"""heat_lite's view of the images it built (issue 30.4) over the real API
and ``openstack app images``: each image with what keeps it, the unused
ones, the dry run of the next retention pass, other projects' images
never shown, bad actions refused; an app's image events (``GET
/apps/{app}/image_events``, ``openstack app image events``). On SQLite
(heat-lite-all).

The images' rows are written into the deployment's database with
``db.image_holds`` (as a build would record its upload): no build, no
Glance here. The
pass against the test cloud's Glance is tested with the builds.
"""

import datetime
import json
import uuid

import pytest
import requests

from harness import databases
from harness import deployment as deployment_mod
from heat_lite.db import image_events, image_holds, managed_images
from tests.functional import test_apps
from tests.functional import test_osc_plugin as osc_plugin


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("images"), extra_conf=test_apps.EXTRA
    )


def _attached(dep):
    return databases.attached("sqlite:///%s/heat_lite.sqlite" % dep.workdir)


def _image(project, name, created_at):
    """An image recorded as a build records its upload (no build: held
    by nothing)."""
    row = managed_images.image_add(
        {
            "id": str(uuid.uuid4()),
            "tenant": project,
            "name": name,
            "created_at": created_at,
        }
    )
    return row["id"]


@pytest.fixture
def images(dep):
    project = "p" + uuid.uuid4().hex[:8]
    with _attached(dep):
        kept = _image(project, "kept", datetime.datetime(2026, 12, 1, 12))
        spare = _image(project, "spare", datetime.datetime(2026, 12, 2))
        image_holds.use(project, [kept], kind="promotion", holder="promo-1")
    return project, kept, spare


def _get(dep, project, path, code=200):
    answer = requests.get(
        dep.endpoint(project) + path, headers={"X-Auth-User": "u"}, timeout=60
    )
    assert answer.status_code == code, answer.text
    return answer.json()


def test_each_image_with_what_keeps_it(dep, images):
    project, kept, spare = images
    listed = _get(dep, project, "/images")["images"]
    assert [i["id"] for i in listed] == [spare, kept]  # newest first
    assert listed[1]["kept_by"] == [{"kind": "promotion", "holder": "promo-1"}]
    assert listed[0]["kept_by"] == [] and listed[0]["state"] == "NEEDED"
    assert listed[0]["retention"]["mode"] == "delete"
    shown = _get(dep, project, "/images/" + kept)["image"]
    assert shown["kept_by"] == listed[1]["kept_by"]
    assert _get(dep, project, "/images?unused=true")["images"] == []
    assert len(_get(dep, project, "/images?limit=1")["images"]) == 1


def test_another_project_sees_none_of_them(dep, images):
    project, kept, _ = images
    other = "o" + project
    assert _get(dep, other, "/images")["images"] == []
    error = _get(dep, other, "/images/" + kept, code=404)
    assert error["error"]["type"] == "ImageNotFound"


def test_the_dry_run_changes_nothing(dep, images):
    project, kept, spare = images
    url = dep.endpoint(project) + "/images/actions"
    answer = requests.post(
        url, json={"dry_run": None}, headers={"X-Auth-User": "u"}, timeout=60
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["decided"] == [
        {
            "id": spare,
            "state": "NEEDED",
            "to": "UNNEEDED",
            "call": None,
            "why": "nothing names it",
        }
    ]
    assert _get(dep, project, "/images/" + spare)["image"]["state"] == "NEEDED"
    for body in ({}, {"purge": None}, {"dry_run": None, "x": 1}, []):
        refused = requests.post(
            url, json=body, headers={"X-Auth-User": "u"}, timeout=60
        )
        assert refused.status_code == 400, (body, refused.text)
    bad = _get(dep, project, "/images?state=GONE", code=400)
    assert "state" in json.dumps(bad)


def test_openstack_app_images(dep, images):
    project, kept, spare = images

    def osc(*args):
        return osc_plugin._osc(dep, "app", "images", *args, project=project)

    listed = json.loads(osc("-f", "json").stdout)
    assert [row["ID"] for row in listed] == [spare, kept]
    assert listed[1]["Kept By"] == ["promotion promo-1"]
    why = json.loads(osc("--why", kept, "-f", "json").stdout)
    assert why == [{"Kept by": "promotion promo-1"}]
    assert json.loads(osc("--unused", "-f", "json").stdout) == []
    [step] = json.loads(osc("--dry-run", "-f", "json").stdout)
    assert (step["ID"], step["Next state"]) == (spare, "UNNEEDED")


@pytest.fixture
def app_events(dep, images):
    """An app of the project, what retention did to two of its images,
    and an event of an image of no app."""
    project, kept, spare = images
    made = test_apps._api(dep, project, "POST", body=test_apps._body())
    assert made.status_code == 201, made.text
    app = made.json()["app"]
    with _attached(dep):
        for image_id in (kept, spare):
            managed_images.image_get(project, image_id)  # the project's
        ours = [
            {"id": kept, "tenant": project, "app_id": app["id"]},
            {"id": spare, "tenant": project, "app_id": app["id"]},
        ]
        image_events.image_event_add(ours[1], "hidden", "nothing names it")
        image_events.image_event_add(
            {"id": str(uuid.uuid4()), "tenant": project}, "hidden", "no app"
        )
        image_events.image_event_add(
            ours[1], "revived", "named again by a use"
        )
        image_events.image_event_add(ours[0], "deleted", "grace over")
    return project, app, kept, spare


def test_an_app_s_image_events(dep, app_events):
    project, app, kept, spare = app_events
    path = "/apps/%s/image_events" % app["name"]
    events = _get(dep, project, path)["image_events"]
    assert [(e["image_id"], e["action"]) for e in events] == [
        (kept, "deleted"),
        (spare, "revived"),
        (spare, "hidden"),
    ]
    assert events[1]["reason"] == "named again by a use"
    assert {e["app_id"] for e in events} == {app["id"]}
    # By id too; a page, and the page after it.
    by_id = "/apps/%s/image_events" % app["id"]
    assert _get(dep, project, by_id)["image_events"] == events
    [first] = _get(dep, project, by_id + "?limit=1")["image_events"]
    assert first == events[0]
    after = _get(dep, project, by_id + "?marker=%d" % first["id"])
    assert after["image_events"] == events[1:]
    for bad in ("?limit=-1", "?limit=x", "?marker=x", "?limit=100000"):
        _get(dep, project, by_id + bad, code=400)
    # Another project has no such app.
    error = _get(dep, "o" + project, by_id, code=404)
    assert error["error"]["type"] == "AppNotFound"
    _get(dep, project, "/apps/nope/image_events", code=404)

    listed = json.loads(
        osc_plugin._osc(
            dep,
            "app",
            "image",
            "events",
            app["name"],
            "--limit",
            "2",
            "-f",
            "json",
            project=project,
        ).stdout
    )
    assert [(r["Image"], r["Action"]) for r in listed] == [
        (kept, "deleted"),
        (spare, "revived"),
    ]
