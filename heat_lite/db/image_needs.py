"""Why a managed image is still needed: the one answer to "may this
image go" (doc/specs/image_retention.md), asked by the retention pass,
the API's ``why`` and the benchmark's cross-check."""

import sqlalchemy as sa

from heat_lite.common import states as st
from heat_lite.db import image_holds, models
from heat_lite.db.session import retry_read, transaction

IMAGE = models.ManagedImage.__table__
RECORD_IMAGE = models.RecordImage.__table__
REFERENCE = models.ImageReference.__table__
RESOURCE = models.Resource.__table__
STACK = models.Stack.__table__
SNAPSHOT = models.Snapshot.__table__


@retry_read
def needed(image_ids, keep_last):
    """Why each of ``image_ids`` is needed: {image id: [reason, ...]},
    an image that nothing keeps mapped to []. The one answer to "may
    this image go" (the pass, the API's ``why`` and the benchmark's
    cross-check all ask it).

    A reason is a dict with ``kind``: ``record`` (``resource_id``,
    ``stack_id``, ``name``, ``role``: a record of a live stack, of any
    role or version, whose properties name it), one of ``KINDS``
    (``holder``), or ``keep_last`` (``rank``: 1 is the newest deployed
    image of its app and branch).

    :param keep_last: ``keep_last(app_id) -> int``, the app's policy.
    """
    ids = list(dict.fromkeys(image_ids))
    why = {image_id: [] for image_id in ids}
    if not ids:
        return why
    with transaction(writer=False) as conn:
        for row in conn.execute(
            sa.select(
                RECORD_IMAGE.c.image_id,
                RESOURCE.c.id,
                RESOURCE.c.stack_id,
                RESOURCE.c.name,
                RESOURCE.c.role,
            )
            .join(RESOURCE, RESOURCE.c.id == RECORD_IMAGE.c.resource_id)
            .join(STACK, STACK.c.id == RESOURCE.c.stack_id)
            # A deleted stack's records (history until the purge) bring
            # nothing back: no rollback, restore or update of it runs.
            .where(
                RECORD_IMAGE.c.image_id.in_(ids), STACK.c.deleted_at.is_(None)
            )
        ):
            why[row.image_id].append(
                {
                    "kind": "record",
                    "resource_id": row.id,
                    "stack_id": row.stack_id,
                    "name": row.name,
                    "role": row.role,
                }
            )
        for row in conn.execute(
            sa.select(
                REFERENCE.c.image_id, REFERENCE.c.kind, REFERENCE.c.holder
            )
            .where(REFERENCE.c.image_id.in_(ids), _holder_exists())
            .order_by(REFERENCE.c.kind, REFERENCE.c.holder)
        ):
            why[row.image_id].append({"kind": row.kind, "holder": row.holder})
        for image_id, rank in _ranks(conn, ids, keep_last):
            why[image_id].append({"kind": "keep_last", "rank": rank})
    return why


def _holder_exists():
    """A reference counts while its holder row exists (snapshots: their
    rows go with their stack, without a step of their own here); a
    ``rollback`` one while its stack is unsettled."""
    return sa.or_(
        REFERENCE.c.kind.not_in(("snapshot", "rollback")),
        sa.and_(
            REFERENCE.c.kind == "snapshot",
            sa.exists().where(SNAPSHOT.c.id == REFERENCE.c.holder),
        ),
        sa.and_(REFERENCE.c.kind == "rollback", image_holds.unsettled()),
    )


def _ranks(conn, ids, keep_last):
    """(image id, rank) of those of ``ids`` that are among the newest
    ``keep_last(app)`` deployed images of their app and branch.

    One statement for every group of the page (a window over the
    groups' deployed images), not one per (app, branch): a pass's page
    of 500 images touches hundreds of groups.
    """
    groups = {
        tuple(g)
        for g in conn.execute(
            sa.select(IMAGE.c.app_id, IMAGE.c.branch)
            .where(
                IMAGE.c.id.in_(ids),
                IMAGE.c.app_id.is_not(None),
                IMAGE.c.deployed_at.is_not(None),
            )
            .distinct()
        )
    }
    limits = {app_id: keep_last(app_id) for app_id, _ in sorted(groups)}
    groups = sorted(g for g in groups if limits[g[0]] > 0)
    if not groups:
        return
    rank = (
        sa.func.row_number()
        .over(
            partition_by=(IMAGE.c.app_id, IMAGE.c.branch),
            order_by=(IMAGE.c.deployed_at.desc(), IMAGE.c.id.desc()),
        )
        .label("rank")
    )
    newest = (
        sa.select(IMAGE.c.id, IMAGE.c.app_id, rank)
        .where(
            sa.tuple_(IMAGE.c.app_id, IMAGE.c.branch).in_(groups),
            IMAGE.c.deployed_at.is_not(None),
            IMAGE.c.state.not_in(st.IMAGE.GONE),
        )
        .subquery()
    )
    for row in conn.execute(
        sa.select(newest.c.id, newest.c.app_id, newest.c.rank)
        .where(
            newest.c.id.in_(ids),
            newest.c.rank <= max(limits[a] for a, _ in groups),
        )
        .order_by(newest.c.id)
    ):
        if row.rank <= limits[row.app_id]:
            yield row.id, row.rank
