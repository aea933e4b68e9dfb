"""A retention pass killed (kill -9) between its database moves and its
Glance calls is finished by the next pass (issue 30), against the test
cloud's real Glance.

A heat-lite-all (noauth, SQLite) acting in the cloud as ``demo`` runs the
pass every second over one page of images: some nothing names, some
already hidden past the grace, some an app keeps. The pass commits a
page's moves, then makes their Glance calls; the test hold file
(``<ledger>.hold-retention``, test deployments only) keeps it between
the two, so the test sees the database ahead of Glance, kills the
process there, twice (once with images DELETING, once HIDDEN but
unconfirmed), and restarts it without the hold: every image ends where
the database says, and no image something keeps is touched.
"""

import os
import signal

import pytest
from openstack import exceptions as os_exc

from harness import databases, polling
from harness import deployment as deployment_mod
from heat_lite.common.states import IMAGE
from heat_lite.db import image_holds, image_moves, managed_images
from tests.functional.test_cloud_retention import (  # noqa: F401 - fixture
    PROJECT,
    _glance_image,
    _managed,
    glance,
)

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(900),
]
# One page (the default page size) holds every image of the test.
RETENTION = """
[retention]
interval = {interval}
mode = delete
grace = 0
keep_last = 0
"""


def _conf(cloud, interval):
    return (
        cloud.heat_conf("demo")
        + "\n[apps]\nallowed_sources = file:///srv/git/*\n"
        + RETENTION.format(interval=interval)
    )


@pytest.fixture
def heat(cloud, tmp_path):
    # No pass at first: the test lays out the images before any pass
    # reads them.
    dep = deployment_mod.Deployment(
        "sqlite", tmp_path / "dep", extra_conf=_conf(cloud, 0)
    )
    os.makedirs(dep.workdir)
    try:
        dep.start()
        with databases.attached("sqlite:///%s/heat_lite.sqlite" % dep.workdir):
            yield dep
    finally:
        _release(dep)
        dep.stop()


def _hold_path(dep):
    return dep.ledger + ".hold-retention"


def _hold(dep):
    open(_hold_path(dep), "w").close()


def _release(dep):
    if os.path.exists(_hold_path(dep)):
        os.remove(_hold_path(dep))


def _kill(dep):
    """kill -9 heat-lite-all (its whole process group): no shutdown."""
    proc = dep.procs["all"]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(60)


def _restart(dep, cloud):
    """Start heat-lite-all again on the same database, passing every
    second."""
    dep.extra_conf = _conf(cloud, 1)
    dep.start()


def _in_glance(images, image_id):
    """(exists, hidden) as Glance says now."""
    try:
        image = images.get_image(image_id)
    except os_exc.NotFoundException:
        return False, False
    return True, bool(image.is_hidden)


def _row(image_id):
    return managed_images.image_get(PROJECT, image_id)


def _states(ids):
    return {_row(i)["state"] for i in ids}


def test_a_pass_killed_between_database_and_glance_is_finished(
    heat,
    cloud,
    glance,  # noqa: F811 - fixture
):
    doomed = [_glance_image(glance) for _ in range(8)]
    stale = [_glance_image(glance) for _ in range(4)]
    kept = [_glance_image(glance) for _ in range(2)]
    for image_id in doomed + stale + kept:
        _managed(image_id)
    for image_id in kept:
        image_holds.use(PROJECT, [image_id], kind="app", holder="app-1")
    # Hidden by an earlier pass, the grace over.
    for image_id in stale:
        glance.update_image(image_id, is_hidden=True)
        row = _row(image_id)
        assert image_moves.move(
            image_id, row["generation"], IMAGE.NEEDED, IMAGE.UNNEEDED
        )
        assert image_moves.move(
            image_id, row["generation"], IMAGE.UNNEEDED, IMAGE.HIDDEN
        )
        image_moves.hidden(image_id)

    # 1. The pass moves the stale images to DELETING and is killed before
    #    Glance deletes them.
    _hold(heat)
    _kill(heat)
    _restart(heat, cloud)
    polling.until(
        lambda: _states(stale) == {IMAGE.DELETING}, 300, "stale DELETING"
    )
    assert _states(doomed) == {IMAGE.UNNEEDED}
    assert all(_in_glance(glance, i) == (True, True) for i in stale)
    _kill(heat)

    # 2. The next pass moves the doomed images to HIDDEN (unconfirmed)
    #    and is killed before Glance hides them.
    _restart(heat, cloud)
    polling.until(
        lambda: _states(doomed) == {IMAGE.HIDDEN}, 300, "doomed HIDDEN"
    )
    assert all(_row(i)["hidden_at"] is None for i in doomed)
    assert all(_in_glance(glance, i) == (True, False) for i in doomed)
    assert all(_in_glance(glance, i) == (True, True) for i in stale)
    _kill(heat)

    # 3. Without the hold the next passes finish both: hidden, then (no
    #    grace) deleted; the kept images are untouched.
    _release(heat)
    _restart(heat, cloud)
    polling.until(
        lambda: _states(doomed + stale) == {IMAGE.DELETED}, 300, "deleted"
    )
    for image_id in doomed + stale:
        assert _in_glance(glance, image_id) == (False, False), image_id
    for image_id in kept:
        assert _row(image_id)["state"] == IMAGE.NEEDED
        assert _in_glance(glance, image_id) == (True, False)
