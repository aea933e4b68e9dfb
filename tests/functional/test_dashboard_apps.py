"""The apps pages in real browsers against the real API
(``heat-lite-all``, noauth): apps with the newest build of each branch,
one app's builds branch by branch, one build's chain and log, and a
cancel from the page after a confirmation; what the page shows is
checked against the API.

The apps' source does not exist: where the engine runs builds, they end
FAILED at their fetch. The cancel is asserted through whichever the API
says happened (cancelled, or finished before the cancel arrived).
"""

import uuid

import pytest
import requests

from harness import databases, git_repo
from harness import deployment as deployment_mod
from heat_lite.common.states import IMAGE
from heat_lite.db import image_holds, managed_images
from heat_lite.engine.fleet.retention import sweep

pytestmark = pytest.mark.functional

C1, C2, C3 = "1" * 40, "2" * 40, "3" * 40
EXTRA = """
[apps]
allowed_sources = file:///srv/git/*
[retention]
# The test moves the images itself.
interval = 0
"""


@pytest.fixture(scope="module")
def heat_all(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("dash-apps"), extra_conf=EXTRA
    )


def _api(dep, project, method, path, body=None):
    answer = requests.request(
        method,
        dep.endpoint(project) + path,
        json=body,
        headers={"X-Auth-User": "dev"},
        timeout=60,
    )
    assert answer.status_code < 300, answer.text
    return answer.json()


def _app(dep, project, name):
    return _api(
        dep,
        project,
        "POST",
        "/apps",
        {
            "name": name,
            "source": {
                "url": "file:///srv/git/" + name,
                "branches": ["main", "rel/*"],
            },
            "builder": {"name": "artifact"},
            "template": git_repo.APP_TEMPLATE,
            "image_parameter": "image",
        },
    )["app"]


def _push(dep, project, app, branch, commit):
    return _api(
        dep,
        project,
        "POST",
        "/apps/%s/pushes" % app,
        {"ref": "refs/heads/" + branch, "commit": commit},
    )["build"]


def test_apps_branches_builds_and_a_cancel(heat_all, browser):
    b = browser
    project = "apps-" + b.name
    _app(heat_all, project, "shop")
    _app(heat_all, project, "quiet")
    _push(heat_all, project, "shop", "main", C1)
    newest = _push(heat_all, project, "shop", "main", C2)
    rel = _push(heat_all, project, "shop", "rel/1", C3)

    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_for("the apps link", lambda: b.css("#nav-apps:not([hidden])"))
    b.click("#nav-apps")
    rows = '#app-list tr[data-app="shop"]'
    b.wait_for("a row per branch of shop", lambda: len(b.css(rows)) == 2)
    branches = [e.get_attribute("data-branch") for e in b.css(rows)]
    assert sorted(branches) == ["main", "rel/1"]
    assert C2[:12] in b.text(rows + '[data-branch="main"]')
    assert "No builds yet" in b.text('#app-list tr[data-app="quiet"]')

    # One app: its builds by branch, newest first.
    b.click('#app-list a[href$="/apps/shop"]')
    b.wait_for(
        "the branches of shop",
        lambda: len(b.css("#app-builds section.branch")) == 2,
    )
    main = '#app-builds section[data-branch="main"] tr[data-build]'
    b.wait_for("two builds of main", lambda: len(b.css(main)) == 2)
    ids = [e.get_attribute("data-build") for e in b.css(main)]
    listed = _api(heat_all, project, "GET", "/apps/shop/builds?branch=main")
    assert ids == [x["id"] for x in listed["builds"]]
    assert ids[0] == newest["id"]

    # One build: its chain, and a cancel.
    b.click('tr[data-build="%s"] a' % rel["id"])
    b.wait_for(
        "the build's commit",
        lambda: b.text("#build-commit") == C3,
    )
    assert "refs/heads/rel/1" in b.text("#build-push")
    assert b.text("#build-stack").startswith("shop-rel-1")
    path = "/apps/shop/builds/" + rel["id"]
    assert b.attr("#build-status .badge", "data-status") is not None
    # The cancel button is there while the build is on its way (a
    # builder may have ended it already: then the page offers none).
    if b.css("#build-cancel:not([disabled])"):
        b.click("#build-cancel")
        b.confirm()
        b.wait_for(
            "the cancel's answer",
            lambda: any(
                word in (b.text("#message") or "")
                for word in ("accepted", "Conflict")
            ),
        )
    build = _api(heat_all, project, "GET", path)["build"]
    assert build["cancel_requested"] or build["finished_at"], build
    b.wait_for(
        "the page shows the API's status",
        lambda: (
            b.attr("#build-status .badge", "data-status")
            == _api(heat_all, project, "GET", path)["build"]["status"]
        ),
    )


def test_an_app_s_images_why_kept_and_when_they_go(heat_all, browser):
    """The app page lists the images its builds made, as GET
    /images?app= says: one a promotion keeps, one nothing names."""
    b = browser
    project = "imgs-" + b.name
    app = _app(heat_all, project, "shop")
    kept, spare = str(uuid.uuid4()), str(uuid.uuid4())
    url = "sqlite:///%s/heat_lite.sqlite" % heat_all.workdir
    with databases.attached(url):
        for image_id in (kept, spare):
            managed_images.image_add(
                {
                    "id": image_id,
                    "tenant": project,
                    "app_id": app["id"],
                    "branch": "main",
                    "name": "shop-" + image_id[:4],
                }
            )
        image_holds.use(project, [kept], kind="promotion", holder="promo-1")
        # One pass: nothing names the spare one (no Glance call yet).
        sweep.Sweep(store=None).run(tenant=project)
        assert (
            managed_images.image_get(project, spare)["state"] == IMAGE.UNNEEDED
        )

    b.open(heat_all.url, "/%s/apps/shop" % project)
    rows = "#app-images tr[data-image]"
    b.wait_for("the app's two images", lambda: len(b.css(rows)) == 2)
    listed = _api(heat_all, project, "GET", "/images?app=shop")["images"]
    assert [e.get_attribute("data-image") for e in b.css(rows)] == [
        i["id"] for i in listed
    ]
    kept_row = '#app-images tr[data-image="%s"]' % kept
    spare_row = '#app-images tr[data-image="%s"]' % spare
    assert b.attr(kept_row, "data-state") == IMAGE.NEEDED
    assert b.text(kept_row + " td.why") == "promotion promo-1"
    assert b.attr(spare_row, "data-state") == IMAGE.UNNEEDED
    assert b.text(spare_row + " td.why").startswith("unneeded since")
