"""The retirement pass's page-wise moves (``image_moves.move_page``) on
SQLite, PostgreSQL and MariaDB: one transaction per page, a few
statements whatever its size, and exactly the rows no use took moved,
whether the use came first or waited for the page."""

import uuid

import pytest
import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import image_holds, image_moves, session
from tests.unit.db.test_image_refs import (
    _references,
    _row,
    _unneeded,
    interleaved,
)

IMAGE = st.IMAGE


@pytest.fixture
def tenant(database):
    return "t" + uuid.uuid4().hex[:8]


def _page(tenant, count=5):
    """``count`` UNNEEDED images and the generations a pass read."""
    return dict(_unneeded(tenant) for _ in range(count))


def _to_deleting(seen):
    return [(IMAGE.UNNEEDED, IMAGE.DELETING, {}, seen)]


def test_a_page_moves_every_image_no_use_took(tenant):
    seen = _page(tenant)
    taken = sorted(seen)[2]
    image_holds.use(tenant, [taken], kind="rollout", holder="r")

    moved = image_moves.move_page(_to_deleting(seen))

    assert moved == set(seen) - {taken}
    for image_id in seen:
        state = _row(tenant, image_id)["state"]
        assert state == (IMAGE.NEEDED if image_id == taken else IMAGE.DELETING)


def test_a_page_sets_each_move_s_values_and_checks_the_vocabulary(tenant):
    unneeded, hidden = _page(tenant, 2), _page(tenant, 2)
    image_moves.move_page(
        [(IMAGE.UNNEEDED, IMAGE.HIDDEN, {"last_error": "x"}, hidden)]
    )
    hidden = {i: _row(tenant, i)["generation"] for i in hidden}
    moved = image_moves.move_page(
        [
            (IMAGE.UNNEEDED, IMAGE.NEEDED, {"unneeded_at": None}, unneeded),
            (IMAGE.HIDDEN, IMAGE.DELETING, {"last_error": None}, hidden),
        ]
    )
    assert moved == set(unneeded) | set(hidden)
    for image_id in unneeded:
        assert _row(tenant, image_id)["unneeded_at"] is None
    for image_id in hidden:
        row = _row(tenant, image_id)
        assert (row["state"], row["last_error"]) == (IMAGE.DELETING, None)
    try:
        image_moves.move_page([(IMAGE.NEEDED, IMAGE.DELETED, {}, unneeded)])
    except ValueError:
        pass
    else:
        raise AssertionError("NEEDED -> DELETED is no move")


def test_a_page_costs_a_few_statements_whatever_its_size(tenant):
    seen = _page(tenant, 40)
    counted = []
    engine = session.get_engine()

    def count(*args):
        counted.append(1)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        assert image_moves.move_page(_to_deleting(seen)) == set(seen)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert len(counted) <= 3  # the locking read, the UPDATE (+ SQLite's BEGIN)


def test_race_a_use_holding_one_row_of_the_page_keeps_that_one(
    database, tenant
):
    """A use holds one image of the page (not committed) when the pass
    moves the page: the pass waits for it, then moves every image but
    that one (its generation was bumped); that one stays NEEDED."""
    seen = _page(tenant)
    taken = sorted(seen)[2]
    moved = interleaved(
        database,
        lambda conn: image_holds.use_in(
            conn, tenant, [taken], kind="build", holder="b"
        ),
        lambda: image_moves.move_page(_to_deleting(seen)),
        "the pass's lock wait",
    )
    assert moved == set(seen) - {taken}
    assert _row(tenant, taken)["state"] == IMAGE.NEEDED
    assert _references(taken) == 1
    for image_id in set(seen) - {taken}:
        assert _row(tenant, image_id)["state"] == IMAGE.DELETING


def test_race_a_page_being_moved_refuses_a_use_of_one_of_its_rows(
    database, tenant
):
    """The pass moved the page to DELETING (not committed) when a use of
    one of its images comes: the use waits, then is refused; the whole
    page is moved."""
    seen = _page(tenant)
    taken = sorted(seen)[2]

    def move(conn):
        moved = image_moves.moves_in(
            conn, IMAGE.UNNEEDED, IMAGE.DELETING, seen
        )
        assert moved == sorted(seen)

    used = interleaved(
        database,
        move,
        lambda: image_holds.use(tenant, [taken], kind="promotion", holder="p"),
        "the use's lock wait",
    )
    assert isinstance(used, exception.ImageRetired)
    assert _references(taken) == 0
    for image_id in seen:
        assert _row(tenant, image_id)["state"] == IMAGE.DELETING
