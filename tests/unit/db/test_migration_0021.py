"""Migration 0021 (image retention's app references for apps created
before they were written) on SQLite, PostgreSQL and MariaDB: an app's
parameter defaults and environment keep the images they name, by ID or
by name in its project; a deleted app, another project's name and a
retired image get nothing."""

import datetime
import json

import pytest
import sqlalchemy as sa

from harness import backends
from heat_lite.db import migration

NOW = datetime.datetime(2026, 12, 4, 12, 0, 0)
BY_ID = "11111111-1111-1111-1111-111111111111"
BY_NAME = "22222222-2222-2222-2222-222222222222"
OTHER_PROJECT = "33333333-3333-3333-3333-333333333333"
RETIRED = "44444444-4444-4444-4444-444444444444"
UNNAMED = "55555555-5555-5555-5555-555555555555"


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        url = "sqlite:///%s/m.sqlite" % tmp_path
    else:
        url, drop = backends.create_database(request.param)
        request.addfinalizer(drop)
    engine = sa.create_engine(url)
    yield engine
    engine.dispose()


def _spec(default, environment):
    return json.dumps(
        {
            "template": {
                "heat_template_version": "2021-04-16",
                "parameters": {
                    "image": {"type": "string"},
                    "base": {"type": "string", "default": default},
                },
            },
            "environment": environment,
        }
    )


def test_live_apps_get_references_for_the_images_they_name(engine):
    migration.upgrade("0020", engine=engine)
    meta = sa.MetaData()
    meta.reflect(engine, only=("app", "managed_image", "image_reference"))
    app, image, reference = (
        meta.tables[t] for t in ("app", "managed_image", "image_reference")
    )
    with engine.begin() as conn:
        for image_id, tenant, name, state in (
            (BY_ID, "p", "a", "HIDDEN"),
            (BY_NAME, "p", "base-v1", "NEEDED"),
            (OTHER_PROJECT, "q", "base-v1", "NEEDED"),
            (RETIRED, "p", "b", "DELETING"),
            (UNNAMED, "p", "c", "UNNEEDED"),
        ):
            conn.execute(
                image.insert().values(
                    id=image_id,
                    tenant=tenant,
                    name=name,
                    state=state,
                    generation=0,
                    created_at=NOW,
                )
            )
        for app_id, deleted, default, env in (
            (
                "live",
                None,
                "base-v1",
                {"parameter_defaults": {"image": BY_ID, "x": RETIRED}},
            ),
            ("gone", NOW, "base-v1", {"parameters": {"image": UNNAMED}}),
        ):
            conn.execute(
                app.insert().values(
                    id=app_id,
                    tenant="p",
                    name=app_id,
                    spec=_spec(default, env),
                    version=1,
                    created_at=NOW,
                    deleted_at=deleted,
                )
            )
    migration.upgrade("0021", engine=engine)
    with engine.connect() as conn:
        columns = (reference.c.image_id, reference.c.kind, reference.c.holder)
        rows = conn.execute(sa.select(*columns)).all()
    assert sorted(rows) == [(BY_ID, "app", "live"), (BY_NAME, "app", "live")]
    # Run again (a second db sync from 0020): nothing twice.
    migration.downgrade("0020", engine=engine)
    migration.upgrade("0021", engine=engine)
    with engine.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count()).select_from(reference)
            ).scalar()
            == 2
        )
