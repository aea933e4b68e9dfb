"""A use of an image a retention pass hid, on SQLite, PostgreSQL and
MariaDB: the database move (HIDDEN -> NEEDED, generation bumped) comes
first, then Glance shows it (``retention.store.show_again``), then the
record; a pass that read the image before the use can no longer move
it, and a pass that hid it concurrently leaves it for the next pass to
show again. Glance is an in-memory stand-in here; the test cloud's is in
tests/functional/test_cloud_retention.py."""

import datetime
import uuid

import pytest

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import image_events, image_holds, image_moves, managed_images
from heat_lite.engine.fleet.retention import store as retention_store
from heat_lite.engine.fleet.retention import sweep

IMAGE = st.IMAGE
HIDE = {"keep_last": 0, "grace": 3600, "mode": "delete"}


class Glance:
    """The build image store's calls, recorded; ``meanwhile`` runs in
    the middle of an un-hide (what a concurrent pass does then)."""

    def __init__(self, tenant, meanwhile=None):
        self.tenant = tenant
        self.calls = []
        self.meanwhile = meanwhile

    def unhide(self, on_behalf, image_id):
        if self.meanwhile:
            self.meanwhile(image_id)
        state = managed_images.image_get(self.tenant, image_id)["state"]
        self.calls.append(("unhide", image_id, state))


@pytest.fixture
def tenant(database):
    return "t" + uuid.uuid4().hex[:8]


def _hidden_by_a_pass(tenant, confirmed=True):
    """An image a pass found unneeded and hid: (id, generation read)."""
    image_id = str(uuid.uuid4())
    managed_images.image_add(
        {"id": image_id, "tenant": tenant, "app_id": None, "name": "img"}
    )
    gen = managed_images.image_get(tenant, image_id)["generation"]
    assert image_moves.move(image_id, gen, IMAGE.NEEDED, IMAGE.UNNEEDED)
    assert image_moves.move(image_id, gen, IMAGE.UNNEEDED, IMAGE.HIDDEN)
    if confirmed:
        image_moves.hidden(image_id)
    return image_id, gen


def _show_again(tenant, revived, glance):
    return retention_store.show_again(revived, None, store=glance)


def test_a_use_shows_a_hidden_image_before_its_operation(tenant):
    image_id, seen = _hidden_by_a_pass(tenant)
    revived = image_holds.use(tenant, [image_id], kind="rollout", holder="r1")
    assert revived == [image_id]
    glance = Glance(tenant)
    assert _show_again(tenant, revived, glance) == [image_id]
    row = managed_images.image_get(tenant, image_id)
    assert row["state"] == IMAGE.NEEDED and row["hidden_at"] is None
    assert row["generation"] > seen
    # A pass that read the image before the use decided to delete it:
    # its conditional write matches nothing.
    assert not image_moves.move(image_id, seen, IMAGE.HIDDEN, IMAGE.DELETING)
    assert managed_images.image_get(tenant, image_id)["state"] == IMAGE.NEEDED
    # A second use has nothing to show.
    assert (
        image_holds.use(tenant, [image_id], kind="rollout", holder="r2") == []
    )


def test_glance_is_asked_after_the_database_move(tenant):
    """When Glance shows the image, no pass can delete it any more."""
    image_id, _ = _hidden_by_a_pass(tenant)
    glance = Glance(tenant)
    _show_again(
        tenant,
        image_holds.use(tenant, [image_id], kind="rollout", holder="r"),
        glance,
    )
    assert glance.calls == [("unhide", image_id, IMAGE.NEEDED)]


def test_a_pass_hiding_meanwhile_leaves_it_for_the_next_pass(tenant):
    """A pass that moved the image to HIDDEN but had not confirmed the
    hide when the use came confirms it while the use shows the image:
    Glance may end hidden, so the row keeps ``hidden_at`` and the next
    pass shows it again."""
    image_id, _ = _hidden_by_a_pass(tenant, confirmed=False)
    revived = image_holds.use(tenant, [image_id], kind="rollout", holder="r")
    glance = Glance(tenant, meanwhile=lambda i: image_moves.hidden(i))
    _show_again(tenant, revived, glance)
    row = managed_images.image_get(tenant, image_id)
    assert row["state"] == IMAGE.NEEDED and row["hidden_at"] is not None
    step = sweep.decide(row, [{"kind": "record"}], HIDE, row["hidden_at"])
    assert (step.to, step.call) == (None, "unhide")


def test_an_image_the_pass_is_deleting_is_refused_and_not_shown(tenant):
    image_id, seen = _hidden_by_a_pass(tenant)
    assert image_moves.move(image_id, seen, IMAGE.HIDDEN, IMAGE.DELETING)
    with pytest.raises(exception.ImageRetired):
        image_holds.use(tenant, [image_id], kind="rollout", holder="r")
    assert retention_store.show_again([image_id], store=Glance(tenant)) == []


def test_unhidden_as_seen_compares_hidden_at(tenant):
    image_id, _ = _hidden_by_a_pass(tenant)
    image_holds.use(tenant, [image_id], kind="rollout", holder="r")
    other = datetime.datetime(2000, 1, 1)
    assert not image_moves.unhidden_as_seen(image_id, other)
    seen = managed_images.image_get(tenant, image_id)["hidden_at"]
    assert image_moves.unhidden_as_seen(image_id, seen)


class Store:
    """The pass's image store (``sweep.ImageStore``), in memory."""

    def __init__(self, refuse=()):
        self.refuse = set(refuse)

    def hide(self, row):
        pass

    def unhide(self, row):
        pass

    def delete(self, row):
        if row["id"] in self.refuse:
            raise exception.ImageStoreRefused(image=row["id"], reason="in use")


@pytest.fixture
def delete_at_once():
    CONF = sweep.CONF
    for name, value in (("mode", "delete"), ("grace", 0), ("keep_last", 0)):
        CONF.set_override(name, value, group="retention")
    yield
    for name in ("mode", "grace", "keep_last"):
        CONF.clear_override(name, group="retention")


def _actions(tenant, image_id):
    events = image_events.image_events(tenant, image_id=image_id)
    return [(e["action"], e["reason"]) for e in reversed(events)]


def test_every_step_of_a_pass_is_an_event_of_the_image(tenant, delete_at_once):
    gone, refused = (str(uuid.uuid4()) for _ in range(2))
    for image_id in (gone, refused):
        managed_images.image_add(
            {"id": image_id, "tenant": tenant, "app_id": "a1", "name": "i"}
        )
    passes = sweep.Sweep(Store(refuse=[refused]))
    for _ in range(3):  # unneeded, hidden, deleted
        passes.run(tenant=tenant)
    assert _actions(tenant, gone) == [
        ("hidden", "unneeded"),
        ("deleted", "grace over"),
    ]
    assert [a for a, _ in _actions(tenant, refused)] == [
        "hidden",
        "delete_failed",
    ]
    assert "in use" in _actions(tenant, refused)[-1][1]
    # The app's image events: both images', newest first.
    app_events = image_events.image_events(tenant, app_id="a1")
    assert len(app_events) == 4
    assert app_events[0]["created_at"] >= app_events[-1]["created_at"]


def test_a_revival_is_an_event_whoever_shows_it(tenant):
    image_id, _ = _hidden_by_a_pass(tenant)
    revived = image_holds.use(tenant, [image_id], kind="rollout", holder="r")
    _show_again(tenant, revived, Glance(tenant))
    assert _actions(tenant, image_id) == [("revived", "named again by a use")]
    with pytest.raises(ValueError):
        image_events.image_event_add(
            managed_images.image_get(tenant, image_id), "vanished"
        )
