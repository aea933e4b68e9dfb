"""An app keeps the images its parameter defaults and environment name
(``db.apps`` writing image retention's ``app`` references) on SQLite,
PostgreSQL and MariaDB: from its create, replaced by each update, gone
with its delete; an app naming an image being deleted is refused with
nothing stored."""

import uuid

import pytest

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import apps as db_apps
from heat_lite.db import image_holds, image_moves, image_needs, managed_images

IMAGE = st.IMAGE
SPEC = {"template": {"heat_template_version": "2021-04-16"}}


@pytest.fixture
def tenant(database):
    return "t" + uuid.uuid4().hex[:8]


def _image(tenant, name="img"):
    """An image a build made, its build over (nothing holds it)."""
    image_id, build = str(uuid.uuid4()), str(uuid.uuid4())
    managed_images.image_add(
        {"id": image_id, "tenant": tenant, "build_id": build, "name": name}
    )
    image_holds.release("build", build)
    return image_id


def _kept_by(*image_ids):
    why = image_needs.needed(list(image_ids), lambda app: 0)
    return {i: [(r["kind"], r["holder"]) for r in why[i]] for i in image_ids}


def _create(tenant, images):
    app_id = str(uuid.uuid4())
    db_apps.app_create(
        {"id": app_id, "tenant": tenant, "name": "a" + app_id[:8]},
        SPEC,
        images=images,
    )
    return app_id


def test_an_app_keeps_what_it_names_until_updated_or_deleted(tenant):
    base, other, spare = (
        _image(tenant),
        _image(tenant, "base-v2"),
        _image(tenant),
    )
    # By ID and by name; a value naming no image heat_lite built is
    # harmless.
    app_id = _create(tenant, [base, "base-v2", "m1.small"])
    assert _kept_by(base, other, spare) == {
        base: [("app", app_id)],
        other: [("app", app_id)],
        spare: [],
    }
    row = db_apps.app_get(tenant, app_id)
    db_apps.app_update(tenant, app_id, row["version"], SPEC, images=[spare])
    assert _kept_by(base, other, spare) == {
        base: [],
        other: [],
        spare: [("app", app_id)],
    }
    # An update that does not say (images=None) leaves them.
    db_apps.app_update(tenant, app_id, row["version"] + 1, SPEC)
    assert _kept_by(spare) == {spare: [("app", app_id)]}
    db_apps.app_delete(tenant, app_id)
    assert _kept_by(spare) == {spare: []}


def test_naming_a_hidden_image_revives_it(tenant):
    image_id = _image(tenant)
    row = managed_images.image_get(tenant, image_id)
    assert image_moves.move(
        image_id, row["generation"], IMAGE.NEEDED, IMAGE.UNNEEDED
    )
    assert image_moves.move(
        image_id, row["generation"], IMAGE.UNNEEDED, IMAGE.HIDDEN
    )
    _create(tenant, [image_id])
    assert managed_images.image_get(tenant, image_id)["state"] == IMAGE.NEEDED


def test_an_app_naming_an_image_being_deleted_is_refused(tenant):
    kept, retired = _image(tenant), _image(tenant)
    row = managed_images.image_get(tenant, retired)
    assert image_moves.move(
        retired, row["generation"], IMAGE.NEEDED, IMAGE.UNNEEDED
    )
    assert image_moves.move(
        retired, row["generation"], IMAGE.UNNEEDED, IMAGE.DELETING
    )
    with pytest.raises(exception.ImageRetired):
        _create(tenant, [kept, retired])
    assert db_apps.app_get_all(tenant) == []
    assert _kept_by(kept) == {kept: []}
    # Nor does an update keep anything of its own then.
    app_id = _create(tenant, [kept])
    with pytest.raises(exception.ImageRetired):
        db_apps.app_update(tenant, app_id, 1, SPEC, images=[retired])
    assert db_apps.app_get(tenant, app_id)["version"] == 1
    assert _kept_by(kept) == {kept: [("app", app_id)]}
