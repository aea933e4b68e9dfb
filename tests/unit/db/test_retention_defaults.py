"""A project's default retention (``db.retention_defaults``) on SQLite,
PostgreSQL and MariaDB: set replaces the whole default (a key left out
is unset), each project reads only its own, the pass reads every
project's default at once, delete unsets (404 after)."""

import uuid

import pytest

from heat_lite.common import exception
from heat_lite.db import retention_defaults as db_defaults


@pytest.fixture
def tenant(database):
    return uuid.uuid4().hex


def test_none_set_is_not_found(tenant):
    with pytest.raises(exception.RetentionDefaultNotFound):
        db_defaults.retention_default_get(tenant)
    assert db_defaults.retention_defaults(tenant) == {}
    with pytest.raises(exception.RetentionDefaultNotFound):
        db_defaults.retention_default_delete(tenant)


def test_set_replaces_the_whole_default(tenant):
    first = db_defaults.retention_default_set(
        tenant, {"keep_last": 5, "grace": 60, "mode": "hide"}
    )
    assert first["retention"] == {"keep_last": 5, "grace": 60, "mode": "hide"}
    again = db_defaults.retention_default_set(tenant, {"keep_last": 0})
    # grace and mode were left out: unset, not kept.
    assert again["retention"] == {"keep_last": 0}
    assert again["updated_at"] >= first["updated_at"]
    assert db_defaults.retention_default_get(tenant) == again
    assert db_defaults.retention_defaults(tenant) == {tenant: {"keep_last": 0}}


def test_each_project_its_own_and_all_at_once(tenant):
    other = "other-" + tenant
    db_defaults.retention_default_set(tenant, {"mode": "report"})
    db_defaults.retention_default_set(other, {"grace": 7})
    with pytest.raises(exception.RetentionDefaultNotFound):
        db_defaults.retention_default_get("third-" + tenant)
    assert db_defaults.retention_defaults(other) == {other: {"grace": 7}}
    every = db_defaults.retention_defaults()
    assert every[tenant] == {"mode": "report"}
    assert every[other] == {"grace": 7}
    db_defaults.retention_default_delete(tenant)
    with pytest.raises(exception.RetentionDefaultNotFound):
        db_defaults.retention_default_get(tenant)
    assert db_defaults.retention_default_get(other)["retention"] == {
        "grace": 7
    }
