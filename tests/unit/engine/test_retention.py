"""The retention pass (``engine.fleet.retention``): each decision, and
whole passes over real rows on SQLite and PostgreSQL.

Glance is stood in for by ``Images`` below, an in-memory image service
that records each call: these tests are about the decisions and their
order against the database. The passes against the test cloud's real
Glance are in tests/functional (with the builds' image store).
"""

import datetime
import uuid

import oslo_messaging as messaging
import pytest

from harness import databases
from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.common import states as st
from heat_lite.db import (
    image_holds,
    image_needs,
    managed_images,
    models,
    session,
)
from heat_lite.db import services as db_services
from heat_lite.engine.fleet.retention import endpoint as retention_endpoint
from heat_lite.engine.fleet.retention import runner, sweep
from tests.unit.db import rows

CONF = conf.CONF
IMAGE = st.IMAGE
T0 = datetime.datetime(2026, 12, 1, 12, 0, 0)
DELETE = {"keep_last": 0, "grace": 3600, "mode": "delete"}


class Images:
    """An image service in memory: what is hidden, what was deleted, and
    which deletes it refuses (an image in use, protected)."""

    def __init__(self):
        self.calls = []
        self.hidden = set()
        self.deleted = set()
        self.refuse = set()
        self.fail = set()

    def hide(self, row):
        image_id = row["id"]
        self.calls.append(("hide", image_id))
        if image_id in self.fail:
            raise RuntimeError("connection reset")
        self.hidden.add(image_id)

    def unhide(self, row):
        image_id = row["id"]
        self.calls.append(("unhide", image_id))
        self.hidden.discard(image_id)

    def delete(self, row):
        image_id = row["id"]
        self.calls.append(("delete", image_id))
        if image_id in self.refuse:
            raise exception.ImageStoreRefused(image=image_id, reason="in use")
        self.deleted.add(image_id)


# decide() ---------------------------------------------------------------
def _row(state, hidden_at=None):
    return {"id": "i", "tenant": "t", "state": state, "hidden_at": hidden_at}


@pytest.mark.parametrize(
    "state, hidden_at, needed, policy, now, expected",
    [
        (IMAGE.NEEDED, None, True, DELETE, T0, None),
        (IMAGE.NEEDED, T0, True, DELETE, T0, (None, "unhide")),
        (IMAGE.NEEDED, None, False, DELETE, T0, (IMAGE.UNNEEDED, None)),
        (IMAGE.UNNEEDED, None, True, DELETE, T0, (IMAGE.NEEDED, None)),
        (IMAGE.UNNEEDED, None, False, DELETE, T0, (IMAGE.HIDDEN, "hide")),
        (IMAGE.UNNEEDED, None, False, dict(DELETE, mode="report"), T0, None),
        (
            IMAGE.UNNEEDED,
            None,
            False,
            dict(DELETE, mode="hide"),
            T0,
            (IMAGE.HIDDEN, "hide"),
        ),
        (IMAGE.HIDDEN, T0, True, DELETE, T0, (IMAGE.NEEDED, "unhide")),
        (IMAGE.HIDDEN, None, False, DELETE, T0, (None, "hide")),
        (IMAGE.HIDDEN, T0, False, DELETE, T0, None),
        (
            IMAGE.HIDDEN,
            T0,
            False,
            DELETE,
            T0 + datetime.timedelta(hours=1),
            (IMAGE.DELETING, "delete"),
        ),
        (
            IMAGE.HIDDEN,
            T0,
            False,
            dict(DELETE, mode="hide"),
            T0 + datetime.timedelta(days=9),
            None,
        ),
        (IMAGE.DELETING, None, False, DELETE, T0, (None, "delete")),
        (IMAGE.DELETED, None, False, DELETE, T0, None),
    ],
)
def test_decide(state, hidden_at, needed, policy, now, expected):
    step = sweep.decide(
        _row(state, hidden_at),
        [{"kind": "app"}] if needed else [],
        policy,
        now,
    )
    assert (step and (step.to, step.call)) == expected


# Whole passes -------------------------------------------------------------
@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request, tmp_path_factory):
    conf.CONF([], project="heat_lite")
    with databases.private_database(
        request.param, tmp_path_factory.mktemp("retention")
    ):
        yield request.param


class Clock:
    def __init__(self):
        self.now = T0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += datetime.timedelta(seconds=seconds)


@pytest.fixture
def world(database):
    """A project's images, an in-memory Glance and a pass on a clock."""
    tenant = "t" + uuid.uuid4().hex[:8]
    images, clock = Images(), Clock()
    CONF.set_override("grace", 3600, group="retention")
    CONF.set_override("keep_last", 0, group="retention")
    yield tenant, images, clock, sweep.Sweep(images, clock)
    CONF.clear_override("grace", group="retention")
    CONF.clear_override("keep_last", group="retention")


def _built(tenant, deployed=False):
    """An image a build made, its build since finished (released)."""
    image_id = str(uuid.uuid4())
    build = str(uuid.uuid4())
    managed_images.image_add(
        {
            "id": image_id,
            "tenant": tenant,
            "app_id": "app-" + tenant,
            "branch": "main",
            "build_id": build,
            "name": "img",
        }
    )
    if deployed:
        managed_images.image_deployed(image_id)
    image_holds.release("build", build)
    return image_id


def _state(tenant, image_id):
    return managed_images.image_get(tenant, image_id)["state"]


def _passes(world, count, seconds=0):
    tenant, _, clock, pass_ = world
    results = []
    for _ in range(count):
        results.append(pass_.run(tenant=tenant))
        clock.advance(seconds)
    return results


def test_an_image_nothing_names_goes_hidden_then_deleted(world):
    tenant, images, clock, pass_ = world
    _, record = rows.stack()
    used, spare = _built(tenant), _built(tenant)
    image_holds.use(tenant, [used], record_id=record)
    assert pass_.run(tenant=tenant) == {"unneeded": 1}
    assert _state(tenant, spare) == IMAGE.UNNEEDED
    assert pass_.run(tenant=tenant) == {"hidden": 1}
    assert images.hidden == {spare}
    # Within the grace nothing more happens.
    clock.advance(3599)
    assert pass_.run(tenant=tenant) == {}
    clock.advance(1)
    assert pass_.run(tenant=tenant) == {"deleted": 1}
    assert images.deleted == {spare}
    row = managed_images.image_get(tenant, spare)
    assert (row["state"], row["deleted_at"]) == (IMAGE.DELETED, clock.now)
    assert _state(tenant, used) == IMAGE.NEEDED
    assert ("hide", used) not in images.calls
    # Deleted images are read no more.
    assert pass_.run(tenant=tenant) == {}


def test_keep_last_keeps_the_newest_deployed_images(world):
    tenant, images, _, pass_ = world
    CONF.set_override("keep_last", 2, group="retention")
    old, mid, new = (_built(tenant, deployed=True) for _ in range(3))
    _passes(world, 2)
    assert [_state(tenant, i) for i in (old, mid, new)] == [
        IMAGE.HIDDEN,
        IMAGE.NEEDED,
        IMAGE.NEEDED,
    ]


def test_report_mode_only_marks_and_hide_mode_never_deletes(world):
    tenant, images, clock, pass_ = world
    CONF.set_override("mode", "report", group="retention")
    try:
        image_id = _built(tenant)
        _passes(world, 3, seconds=7200)
        assert _state(tenant, image_id) == IMAGE.UNNEEDED
        assert images.calls == []
        CONF.set_override("mode", "hide", group="retention")
        _passes(world, 3, seconds=7200)
        assert _state(tenant, image_id) == IMAGE.HIDDEN
        assert images.deleted == set()
    finally:
        CONF.clear_override("mode", group="retention")


def test_a_use_revives_a_hidden_image_and_the_pass_shows_it(world):
    tenant, images, _, pass_ = world
    image_id = _built(tenant)
    _passes(world, 2)
    assert images.hidden == {image_id}
    assert image_holds.use(
        tenant, [image_id], kind="promotion", holder="p"
    ) == [image_id]
    # The use's caller would show it now; if it did not, the pass does.
    assert pass_.run(tenant=tenant) == {"shown": 1}
    assert images.hidden == set()
    row = managed_images.image_get(tenant, image_id)
    assert (row["state"], row["hidden_at"]) == (IMAGE.NEEDED, None)


def test_an_image_named_again_before_deletion_is_brought_back(world):
    tenant, images, _, pass_ = world
    CONF.set_override("keep_last", 0, group="retention")
    image_id = _built(tenant, deployed=True)
    _passes(world, 2)
    assert _state(tenant, image_id) == IMAGE.HIDDEN
    # The app's policy changed: keep_last counts it again.
    CONF.set_override("keep_last", 1, group="retention")
    assert pass_.run(tenant=tenant) == {"revived": 1}
    assert _state(tenant, image_id) == IMAGE.NEEDED
    assert images.hidden == set()


def test_a_refused_delete_is_retried_by_the_next_pass(world):
    tenant, images, clock, pass_ = world
    image_id = _built(tenant)
    _passes(world, 2, seconds=3600)
    images.refuse.add(image_id)
    assert pass_.run(tenant=tenant) == {"refused": 1}
    row = managed_images.image_get(tenant, image_id)
    assert row["state"] == IMAGE.DELETING and "in use" in row["last_error"]
    images.refuse.clear()
    assert pass_.run(tenant=tenant) == {"deleted": 1}
    assert managed_images.image_get(tenant, image_id)["last_error"] is None


def test_a_pass_cut_short_is_finished_by_the_next(world):
    """The hide call fails after the move (as if the engine died between
    the two): the row says HIDDEN, unconfirmed; the next pass hides it
    again, and deletes it only a grace after that."""
    tenant, images, clock, pass_ = world
    image_id = _built(tenant)
    _passes(world, 1)
    images.fail.add(image_id)
    assert pass_.run(tenant=tenant) == {"failed": 1}
    row = managed_images.image_get(tenant, image_id)
    assert (row["state"], row["hidden_at"]) == (IMAGE.HIDDEN, None)
    images.fail.clear()
    clock.advance(7200)
    assert pass_.run(tenant=tenant) == {"hidden": 1}
    assert pass_.run(tenant=tenant) == {}
    clock.advance(3600)
    assert pass_.run(tenant=tenant) == {"deleted": 1}


def test_a_dry_run_changes_nothing(world):
    tenant, images, _, pass_ = world
    image_id = _built(tenant)
    [step] = pass_.run(dry_run=True, tenant=tenant)["decided"]
    assert (step.image_id, step.to) == (image_id, IMAGE.UNNEEDED)
    assert _state(tenant, image_id) == IMAGE.NEEDED
    assert images.calls == []


def test_an_image_of_a_build_in_flight_is_kept(world):
    tenant, images, _, pass_ = world
    image_id, build = str(uuid.uuid4()), str(uuid.uuid4())
    managed_images.image_add(
        {"id": image_id, "tenant": tenant, "build_id": build}
    )
    _passes(world, 3, seconds=7200)
    assert _state(tenant, image_id) == IMAGE.NEEDED
    assert image_needs.needed([image_id], lambda a: 0)[image_id] == [
        {"kind": "build", "holder": build}
    ]


def test_pages_cover_every_image(world):
    tenant, images, _, pass_ = world
    CONF.set_override("page_size", 2, group="retention")
    try:
        made = [_built(tenant) for _ in range(5)]
        assert pass_.run(tenant=tenant) == {"unneeded": 5}
        assert {_state(tenant, i) for i in made} == {IMAGE.UNNEEDED}
    finally:
        CONF.clear_override("page_size", group="retention")
    assert models.utcnow()  # (the pass read its own clock, not this one)


# The images' endpoint ------------------------------------------------------
def test_the_endpoint_shows_each_image_with_what_keeps_it(world):
    tenant, images, clock, pass_ = world
    ctxt = context.RequestContext(project_id=tenant, user_id="u")
    _, record = rows.stack()
    used, spare = _built(tenant), _built(tenant)
    image_holds.use(tenant, [used], record_id=record)
    endpoint = retention_endpoint.ImageEndpoint()
    [step] = endpoint.images_dry_run(ctxt)
    assert (step["id"], step["to"]) == (spare, IMAGE.UNNEEDED)
    listed = {i["id"]: i for i in endpoint.list_images(ctxt)}
    assert [r["kind"] for r in listed[used]["kept_by"]] == ["record"]
    assert listed[spare]["kept_by"] == [] and listed[spare]["goes_at"] is None
    pass_.run(tenant=tenant)
    pass_.run(tenant=tenant)
    shown = endpoint.show_image(ctxt, spare)
    assert shown["state"] == IMAGE.HIDDEN
    assert shown["goes_at"] == "2026-12-01T13:00:00Z"  # hidden + 1 h grace
    assert [i["id"] for i in endpoint.list_images(ctxt, unused=True)] == [
        spare
    ]
    assert endpoint.list_images(ctxt, state=IMAGE.NEEDED)[0]["id"] == used
    assert len(endpoint.list_images(ctxt, limit=1)) == 1
    other = context.RequestContext(project_id="other-" + tenant, user_id="u")
    assert endpoint.list_images(other) == []
    for call, error in (
        (lambda: endpoint.show_image(other, spare), exception.ImageNotFound),
        (lambda: endpoint.list_images(ctxt, state="GONE"), exception.Invalid),
    ):
        with pytest.raises(messaging.ExpectedException) as info:
            call()
        assert isinstance(info.value.exc_info[1], error)


# Who runs the pass ----------------------------------------------------------
class _Fence:
    """An engine life's fence as the runner reads it."""

    def __init__(self, engine_id):
        self.engine_id = engine_id
        self.valid = True

    def lease_valid(self):
        return self.valid


def test_one_live_engine_runs_the_pass_and_another_takes_it_over(world):
    """Of two live engines exactly one passes per tick; once its
    heartbeat is older than ``engine_life_check_timeout`` (and it is
    fenced) the other passes at its next tick, with nothing handed
    over."""
    tenant, _, _, pass_ = world
    ids = [str(uuid.uuid4()) for _ in "12"]
    for engine_id in ids:
        db_services.service_create(
            {
                "engine_id": engine_id,
                "host": "h",
                "hostname": "h",
                "binary": "heat-lite-engine",
                "topic": "t",
                "pid": 1,
                "report_interval": 1.0,
                "epoch": 1,
            }
        )
    fences = {e: _Fence(e) for e in ids}
    runners = {e: runner.RetentionRunner(fences[e], pass_) for e in ids}
    image_id = _built(tenant)
    service = models.Service.__table__
    try:
        ran = [e for e in ids if runners[e].tick() is not None]
        assert len(ran) == 1
        assert _state(tenant, image_id) == IMAGE.UNNEEDED
        [owner] = ran
        [other] = [e for e in ids if e != owner]
        assert runners[owner].tick() is not None  # it stays the owner
        assert runners[other].tick() is None
        # The owner dies: its heartbeat ages, its fence closes.
        with session.transaction() as conn:
            conn.execute(
                service.update()
                .where(service.c.engine_id == owner)
                .values(updated_at=datetime.datetime(2000, 1, 1))
            )
        fences[owner].valid = False
        later = _built(tenant)
        assert runners[owner].tick() is None
        assert _state(tenant, later) == IMAGE.NEEDED
        assert runners[other].tick() is not None
        assert _state(tenant, later) == IMAGE.UNNEEDED
    finally:
        with session.transaction() as conn:
            conn.execute(service.delete().where(service.c.engine_id.in_(ids)))
