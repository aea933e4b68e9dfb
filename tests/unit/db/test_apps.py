"""Apps' rows (``db.apps``) on SQLite, PostgreSQL and MariaDB: names
unique among a project's live apps by the database's key, updates
conditional on the version read, soft delete and purge."""

import datetime
import threading
import uuid

import pytest
import sqlalchemy as sa

from heat_lite.common import exception
from heat_lite.db import apps as db_apps
from heat_lite.db import models, purge, session
from tests.unit.db import rows

SPEC = {"source": {"url": "file:///srv/git/a", "branches": ["main"]}}


@pytest.fixture
def tenant(database):
    return uuid.uuid4().hex


def _create(tenant, name="shop", secret=None):
    return db_apps.app_create(
        {"id": str(uuid.uuid4()), "tenant": tenant, "name": name},
        SPEC,
        secret,
    )


def test_create_get_by_id_or_name_in_the_project_only(tenant):
    app = _create(tenant, secret="sealed")
    assert app["spec"] == SPEC and app["version"] == 1
    assert app["webhook_secret"] == "sealed"
    assert db_apps.app_get(tenant, app["id"])["id"] == app["id"]
    assert db_apps.app_get(tenant, "shop")["id"] == app["id"]
    with pytest.raises(exception.AppNotFound):
        db_apps.app_get("other", app["id"])
    with pytest.raises(exception.AppNotFound):
        db_apps.app_get("other", "shop")


def test_a_live_name_is_unique_per_project_and_free_after_delete(tenant):
    app = _create(tenant)
    with pytest.raises(exception.AppExists):
        _create(tenant)
    _create("another-" + tenant)  # another project may use it
    _create(tenant, name="Shop")  # names compare exactly (MariaDB too)
    db_apps.app_delete(tenant, app["id"])
    with pytest.raises(exception.AppNotFound):
        db_apps.app_get(tenant, app["id"])
    with pytest.raises(exception.AppNotFound):
        db_apps.app_delete(tenant, app["id"])
    assert _create(tenant)["id"] != app["id"]


def test_concurrent_creates_of_one_name_one_wins(tenant):
    results = []

    def create():
        try:
            results.append(_create(tenant, name="race")["id"])
        except exception.AppExists as exc:
            results.append(exc)

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(isinstance(r, str) for r in results) == 1
    assert sum(isinstance(r, exception.AppExists) for r in results) == 3


def test_an_update_is_conditional_on_the_version_read(tenant):
    app = _create(tenant, secret="sealed")
    new = dict(SPEC, image_parameter="img")
    updated = db_apps.app_update(tenant, app["id"], 1, new)
    assert updated["spec"] == new and updated["version"] == 2
    assert updated["webhook_secret"] == "sealed"
    with pytest.raises(exception.AppChanged) as raised:
        db_apps.app_update(tenant, app["id"], 1, SPEC)
    assert raised.value.code == 409
    assert db_apps.app_get(tenant, app["id"])["spec"] == new
    cleared = db_apps.app_update(tenant, app["id"], 2, new, None)
    assert cleared["webhook_secret"] is None
    with pytest.raises(exception.AppNotFound):
        db_apps.app_update("other", app["id"], 3, new)
    db_apps.app_delete(tenant, app["id"])
    with pytest.raises(exception.AppNotFound):
        db_apps.app_update(tenant, app["id"], 3, new)


def test_list_is_per_project_and_pages(tenant):
    ids = [_create(tenant, name="app%d" % i)["id"] for i in range(5)]
    _create("another-" + tenant, name="app0")
    gone = _create(tenant, name="gone")
    db_apps.app_delete(tenant, gone["id"])
    listed = [a["id"] for a in db_apps.app_get_all(tenant, sort_dir="asc")]
    assert listed == ids
    first = db_apps.app_get_all(tenant, limit=2, sort_key="name",
                                sort_dir="asc")  # fmt: skip
    rest = db_apps.app_get_all(
        tenant, marker=first[-1]["id"], sort_key="name", sort_dir="asc"
    )
    assert [a["name"] for a in first + rest] == ["app%d" % i for i in range(5)]
    with pytest.raises(exception.Invalid):
        db_apps.app_get_all("another-" + tenant, marker=ids[0])


def test_purge_deleted_removes_old_deleted_apps_only(tenant):
    live = _create(tenant, name="live")
    old = _create(tenant, name="old")
    db_apps.app_delete(tenant, old["id"])
    later = models.utcnow() + datetime.timedelta(seconds=1)
    assert purge.purge_deleted(later, tenant=tenant)["apps"] == 1
    assert db_apps.app_get(tenant, live["id"])["id"] == live["id"]
    assert purge.purge_deleted(later, tenant=tenant)["apps"] == 0
    young = _create(tenant, name="young")
    db_apps.app_delete(tenant, young["id"])
    assert (
        purge.purge_deleted(later - datetime.timedelta(hours=1))["apps"] == 0
    )


def _trust(stack_id, stored, **values):
    with session.transaction() as conn:
        conn.execute(
            rows.STACK.update()
            .where(rows.STACK.c.id == stack_id)
            .values(trust_id=stored, **values)
        )


def _stored(stack_id):
    with session.transaction() as conn:
        return conn.execute(
            sa.select(rows.STACK.c.trust_id).where(rows.STACK.c.id == stack_id)
        ).scalar()


def test_an_apps_trust_is_kept_and_cleared_by_its_delete(tenant):
    app = db_apps.app_create(
        {"id": str(uuid.uuid4()), "tenant": tenant, "name": "t",
         "trust_id": "fernet:x"},
        SPEC,
    )  # fmt: skip
    assert db_apps.app_get(tenant, app["id"])["trust_id"] == "fernet:x"
    assert not db_apps.app_trust_set(tenant, app["id"], "fernet:y")
    bare = _create(tenant, name="bare")
    assert db_apps.app_trust_set(tenant, bare["id"], "fernet:y")
    assert db_apps.app_get(tenant, bare["id"])["trust_id"] == "fernet:y"
    db_apps.app_delete(tenant, app["id"])
    with session.transaction() as conn:
        row = conn.execute(
            db_apps.APP.select().where(db_apps.APP.c.id == app["id"])
        ).first()
    assert row.trust_id is None


def test_live_stacks_borrowing_a_trust_are_handed_another(tenant):
    root, _ = rows.stack()
    nested, _ = rows.stack()
    deleted, _ = rows.stack()
    other, _ = rows.stack()
    lent = "borrowed:fernet:app-" + tenant
    _trust(root, lent)
    _trust(nested, lent, owner_id=root)
    _trust(deleted, lent, deleted_at=models.utcnow())
    _trust(other, "fernet:own")
    assert db_apps.trust_borrowers(lent) == [root]  # live roots only
    assert db_apps.trust_hand_over(lent, "fernet:new") == 2
    assert [_stored(s) for s in (root, nested, deleted, other)] == [
        "fernet:new", "fernet:new", lent, "fernet:own"
    ]  # fmt: skip
    assert db_apps.trust_borrowers(lent) == []
