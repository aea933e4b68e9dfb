"""Rollout and promotion lists page by keyset (newest first, ``limit``
and ``marker``) on each dialect: pages neither skip nor repeat a row,
also when rows share a creation time, and a marker the project cannot
see is refused."""

import uuid

import pytest

from heat_lite.common import exception
from heat_lite.db import promotions, rollouts


def _promotion(tenant, target_tenant="other"):
    pid = str(uuid.uuid4())
    promotions.promotion_create(
        {
            "id": pid,
            "tenant": tenant,
            "target_tenant": target_tenant,
            "status": "COMPLETE",
            "source_stack_id": "src",
            "source_stack_name": "src",
            "source_template_id": 1,
            "source_template_sha256": "0" * 64,
            "target_stack_id": str(uuid.uuid4()),
            "target_stack_name": "dst",
            "spec": {},
        }
    )
    return pid


def _rollout(tenant):
    rid = str(uuid.uuid4())
    rollouts.rollout_create(
        {
            "id": rid,
            "tenant": tenant,
            "name": "r",
            "status": "COMPLETE",
            "spec": {},
        },
        [],
    )
    return rid


def _pages(list_page, size):
    seen, marker = [], None
    while True:
        page = [r["id"] for r in list_page(limit=size, marker=marker)]
        assert len(page) <= size
        seen += page
        if len(page) < size:
            return seen
        marker = page[-1]


@pytest.mark.parametrize("size", [1, 3, 7])
def test_promotion_pages_cover_the_list_once(database, size):
    tenant = "pg-%s" % uuid.uuid4().hex[:8]
    mine = [_promotion(tenant) for _ in range(5)]
    mine.append(_promotion("elsewhere", target_tenant=tenant))  # into it
    _promotion("elsewhere")  # neither from nor into: not listed
    whole = [r["id"] for r in promotions.promotion_get_all(tenant)]
    assert sorted(whole) == sorted(mine)
    assert (
        _pages(lambda **kw: promotions.promotion_get_all(tenant, **kw), size)
        == whole
    )


@pytest.mark.parametrize("size", [1, 2, 5])
def test_rollout_pages_cover_the_list_once(database, size):
    tenant = "rl-%s" % uuid.uuid4().hex[:8]
    mine = [_rollout(tenant) for _ in range(4)]
    _rollout("elsewhere")
    whole = [r["id"] for r in rollouts.rollout_get_all(tenant)]
    assert sorted(whole) == sorted(mine)
    assert (
        _pages(lambda **kw: rollouts.rollout_get_all(tenant, **kw), size)
        == whole
    )


def test_a_marker_of_another_project_is_invalid(database):
    theirs_p = _promotion("them")
    theirs_r = _rollout("them")
    with pytest.raises(exception.Invalid, match="marker"):
        promotions.promotion_get_all("us", limit=5, marker=theirs_p)
    with pytest.raises(exception.Invalid, match="marker"):
        rollouts.rollout_get_all("us", limit=5, marker=theirs_r)
