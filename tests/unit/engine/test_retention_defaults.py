"""A project's default retention in the pass and the images' endpoint
(issue 30 item 2): key by key, an app's own retention, else its
project's default, else the ``[retention]`` options; the pass reads the
defaults of every project once, not per image. On SQLite and PostgreSQL.

Glance is the in-memory ``Images`` of test_retention (the decisions and
their order against the database are under test, not Glance).
"""

import uuid

import oslo_messaging as messaging
import pytest

from harness import databases
from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.common import states as st
from heat_lite.db import apps as db_apps
from heat_lite.db import image_holds, managed_images
from heat_lite.db import retention_defaults as db_defaults
from heat_lite.engine.fleet.retention import endpoint as retention_endpoint
from heat_lite.engine.fleet.retention import sweep
from tests.unit.engine.test_changes import _statements
from tests.unit.engine.test_retention import Clock, Images

CONF = conf.CONF
IMAGE = st.IMAGE


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request, tmp_path_factory):
    conf.CONF([], project="heat_lite")
    with databases.private_database(
        request.param, tmp_path_factory.mktemp("retention-defaults")
    ):
        yield request.param


@pytest.fixture
def world(database):
    """Two projects, an in-memory Glance, a pass on a clock, and the
    options: keep the newest deployed image, delete an hour after."""
    tenants = ["t" + uuid.uuid4().hex[:8] for _ in range(2)]
    images, clock = Images(), Clock()
    CONF.set_override("grace", 3600, group="retention")
    CONF.set_override("keep_last", 1, group="retention")
    yield tenants, images, clock, sweep.Sweep(images, clock)
    CONF.clear_override("grace", group="retention")
    CONF.clear_override("keep_last", group="retention")


def _built(tenant, app_id, count):
    """``count`` deployed images of the app's main branch, oldest first
    (their builds finished)."""
    made = []
    for _ in range(count):
        image_id, build = str(uuid.uuid4()), str(uuid.uuid4())
        managed_images.image_add(
            {
                "id": image_id,
                "tenant": tenant,
                "app_id": app_id,
                "branch": "main",
                "build_id": build,
                "name": "img",
            }
        )
        managed_images.image_deployed(image_id)
        image_holds.release("build", build)
        made.append(image_id)
    return made


def _states(tenant, ids):
    return [managed_images.image_get(tenant, i)["state"] for i in ids]


def test_the_project_default_keeps_one_more_than_the_option(world):
    (ours, theirs), images, _, pass_ = world
    db_defaults.retention_default_set(ours, {"keep_last": 2})
    mine = _built(ours, "app-" + ours, 3)
    other = _built(theirs, "app-" + theirs, 3)
    # One pass over every project (not one per project): the defaults
    # are read once, whatever the images.
    _, statements = _statements(pass_.run)
    read = [s for s in statements if "retention_default" in s]
    assert len(read) == 1, read
    pass_.run()
    # Ours: its default's keep_last 2; theirs: the option's 1.
    assert _states(ours, mine) == [IMAGE.HIDDEN, IMAGE.NEEDED, IMAGE.NEEDED]
    assert _states(theirs, other) == [
        IMAGE.HIDDEN,
        IMAGE.HIDDEN,
        IMAGE.NEEDED,
    ]
    assert images.hidden >= {mine[0], other[0], other[1]}
    # Unset: the option decides again (keep the newest only).
    db_defaults.retention_default_delete(ours)
    pass_.run()
    pass_.run()
    assert _states(ours, mine) == [IMAGE.HIDDEN, IMAGE.HIDDEN, IMAGE.NEEDED]


def test_an_app_s_own_key_wins_and_the_rest_is_the_project_s(world):
    """The app says mode report; the project says keep_last 0 and mode
    hide; the option keep_last 1: the newest image is unneeded (the
    project's keep_last) and only marked (the app's mode)."""
    (ours, _), images, clock, pass_ = world
    app = db_apps.app_create(
        {"id": str(uuid.uuid4()), "tenant": ours, "name": "shop"},
        {"retention": {"mode": "report"}},
        None,
    )
    db_defaults.retention_default_set(ours, {"keep_last": 0, "mode": "hide"})
    [image_id] = _built(ours, app["id"], 1)
    for _ in range(3):
        pass_.run(tenant=ours)
        clock.advance(7200)
    assert _states(ours, [image_id]) == [IMAGE.UNNEEDED]
    assert images.calls == []
    # Without its own mode the app follows the project's: hidden, and
    # never deleted, the grace long over.
    db_apps.app_update(ours, app["id"], app["version"], {}, db_apps.KEEP)
    for _ in range(3):
        pass_.run(tenant=ours)
        clock.advance(7200)
    assert _states(ours, [image_id]) == [IMAGE.HIDDEN]
    assert images.deleted == set()


def _expect(error, call):
    with pytest.raises(messaging.ExpectedException) as info:
        call()
    assert isinstance(info.value.exc_info[1], error)
    return info.value.exc_info[1]


def test_the_endpoint_sets_shows_and_unsets_a_project_s_own(world):
    (ours, theirs), images, clock, pass_ = world
    endpoint = retention_endpoint.ImageEndpoint()
    ctxt = context.RequestContext(project_id=ours, user_id="u")
    elsewhere = context.RequestContext(project_id=theirs, user_id="u")
    options = {"keep_last": 1, "grace": 3600, "mode": "delete"}
    shown = endpoint.show_retention(ctxt)
    assert shown["project_default"] == {} and shown["effective"] == options
    set_ = endpoint.set_retention(ctxt, {"grace": 60})
    assert set_["project_default"] == {"grace": 60}
    assert set_["effective"] == dict(options, grace=60)
    assert set_["options"] == options and set_["updated_at"]
    assert endpoint.show_retention(ctxt) == set_
    # Another project sees only its own (nothing set).
    assert endpoint.show_retention(elsewhere)["project_default"] == {}
    _expect(
        exception.RetentionDefaultNotFound,
        lambda: endpoint.delete_retention(elsewhere),
    )
    for bad in (
        {},
        None,
        [],
        {"keep_last": -1},
        {"keep_last": True},
        {"grace": "60"},
        {"mode": "purge"},
        {"keep": 1},
    ):
        error = _expect(
            exception.Invalid,
            lambda bad=bad: endpoint.set_retention(ctxt, bad),
        )
        assert "retention" in str(error), bad
    assert endpoint.show_retention(ctxt)["project_default"] == {"grace": 60}

    # The images' view: when it goes follows the project's grace.
    [old, _] = _built(ours, "app-" + ours, 2)
    pass_.run(tenant=ours)
    pass_.run(tenant=ours)
    shown = endpoint.show_image(ctxt, old)
    assert shown["state"] == IMAGE.HIDDEN
    assert shown["retention"] == dict(options, grace=60)
    assert shown["goes_at"] == "2026-12-01T12:01:00Z"  # hidden + 60 s
    clock.advance(60)
    assert pass_.run(tenant=ours) == {"deleted": 1}

    assert endpoint.delete_retention(ctxt) is None
    assert endpoint.show_retention(ctxt)["project_default"] == {}
    _expect(
        exception.RetentionDefaultNotFound,
        lambda: endpoint.delete_retention(ctxt),
    )
