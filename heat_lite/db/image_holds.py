"""Who names a managed image: resource records (``record_image``) and
other holders (``image_reference``), and the writes that order a use
against a retirement (doc/specs/image_retention.md).

Two writers meet on the ``managed_image`` row, never on the references
alone. A use (``use``) bumps the row's ``generation`` and makes it
NEEDED before it writes its reference, in one transaction; the
retirement pass reads (id, generation) and moves an image only with a
write conditional on both (``image_moves.move``). So a use committed
while the pass decided makes the pass's write match nothing, and a use
that comes after the pass moved the image to DELETING matches nothing
itself and is refused (``ImageRetired``). Neither reads under a lock:
each is one conditional write whose row count says who won, on every
dialect.

References of resource records live in ``record_image`` and count only
while the record row exists; trimming or purging records drops them
too (``forget_records``), so the table does not grow with history. A
snapshot's count only while the snapshot row exists (deleted with its
stack, or by the user). Every other holder (``KINDS``) removes its own
rows with ``release`` when it can no longer bring the image back.
"""

import re

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import models
from heat_lite.db.session import retry_write, transaction

IMAGE = models.ManagedImage.__table__
RECORD_IMAGE = models.RecordImage.__table__
REFERENCE = models.ImageReference.__table__
RESOURCE = models.Resource.__table__
STACK = models.Stack.__table__
# Holders other than resource records. ``rollback``: a root stack (its
# id) whose running or failed operation updated a record in place off an
# image, which a rollback (or the user's update back) names again; it
# counts while that stack is unsettled (``_unsettled``).
KINDS = ("snapshot", "rollout", "promotion", "build", "app", "rollback")

_UUID = re.compile(
    r"\A[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
    r"[0-9a-fA-F]{12}\Z"
)

_USABLE_NOT_HIDDEN = tuple(s for s in st.IMAGE.USABLE if s != st.IMAGE.HIDDEN)


def use_in(conn, tenant, image_ids, record_id=None, kind=None, holder=None):
    """In the caller's transaction ``conn``: make each managed image of
    ``image_ids`` NEEDED (bumping its generation) and write the
    reference of the holder (a record id, or ``kind`` + ``holder``).
    Images heat_lite did not build are left alone: nothing retires them.

    :returns: the ids that were HIDDEN (revived here; the caller un-hides
        them in Glance, then calls ``unhidden``).
    :raises ImageRetired: if one is DELETING or DELETED; nothing of the
        use is then kept (the caller's transaction rolls back).
    """
    if (record_id is None) == (kind is None):
        raise ValueError("a use names a record or a kind of holder")
    if kind is not None and kind not in KINDS:
        raise ValueError("unknown holder kind %r" % kind)
    revived, managed = [], []
    for image_id in _ids(conn, tenant, image_ids):
        bump = IMAGE.update().where(IMAGE.c.id == image_id)
        values = {
            "state": st.IMAGE.NEEDED,
            "generation": IMAGE.c.generation + 1,
            "unneeded_at": None,
        }
        if conn.execute(
            bump.where(IMAGE.c.state == st.IMAGE.HIDDEN).values(
                dict(values, delete_after=None)
            )
        ).rowcount:
            revived.append(image_id)
            managed.append(image_id)
            continue
        if conn.execute(
            bump.where(IMAGE.c.state.in_(_USABLE_NOT_HIDDEN)).values(values)
        ).rowcount:
            managed.append(image_id)
            continue
        state = conn.execute(
            sa.select(IMAGE.c.state).where(IMAGE.c.id == image_id)
        ).scalar()
        if state is not None:
            raise exception.ImageRetired(image=image_id)
    for image_id in managed:
        if record_id is not None:
            insert = RECORD_IMAGE.insert().values(
                image_id=image_id, resource_id=record_id
            )
        else:
            insert = REFERENCE.insert().values(
                image_id=image_id,
                kind=kind,
                holder=str(holder),
                tenant=tenant,
                created_at=models.utcnow(),
            )
        _insert_once(conn, insert)
    return revived


def _ids(conn, tenant, refs):
    """Image ids for ``refs`` (ids, or names: a name counts for every
    image of the project heat_lite built under it that a use could take,
    the way a plugin's lookup by name would find one of them)."""
    ids = [r for r in dict.fromkeys(refs) if _UUID.match(r)]
    names = [r for r in dict.fromkeys(refs) if not _UUID.match(r)]
    if names:
        ids.extend(
            conn.execute(
                sa.select(IMAGE.c.id)
                .where(
                    IMAGE.c.tenant == tenant,
                    IMAGE.c.name.in_(names),
                    IMAGE.c.state.in_(st.IMAGE.USABLE),
                )
                .order_by(IMAGE.c.id)
            ).scalars()
        )
    return ids


def _insert_once(conn, insert):
    """Insert, a row already there being as good (a use repeated)."""
    try:
        with conn.begin_nested():
            conn.execute(insert)
    except db_exc.DBDuplicateEntry:
        pass


@retry_write
def use(tenant, image_ids, record_id=None, kind=None, holder=None):
    """``use_in`` in a transaction of its own."""
    with transaction() as conn:
        return use_in(conn, tenant, image_ids, record_id, kind, holder)


@retry_write
def record_images_now(tenant, record_id, refs, stack_id=None):
    """After an update in place: the record names exactly ``refs`` (ids
    or names) now; its references to other images end.

    :param stack_id: the record's stack. The images it no longer names
        are then held (kind ``rollback``, by the root stack) while the
        stack's operation may still roll back onto them: until the stack
        is COMPLETE on its newest template, or deleted.
    """
    with transaction() as conn:
        keep = _ids(conn, tenant, refs)
        query = sa.select(RECORD_IMAGE.c.image_id).where(
            RECORD_IMAGE.c.resource_id == record_id
        )
        if keep:
            query = query.where(RECORD_IMAGE.c.image_id.not_in(keep))
        dropped = list(conn.execute(query).scalars())
        if not dropped:
            return
        if stack_id is not None:
            root = _root(conn, stack_id)
            for image_id in dropped:
                _insert_once(
                    conn,
                    REFERENCE.insert().values(
                        image_id=image_id,
                        kind="rollback",
                        holder=root,
                        tenant=tenant,
                        created_at=models.utcnow(),
                    ),
                )
        conn.execute(
            RECORD_IMAGE.delete().where(
                RECORD_IMAGE.c.resource_id == record_id,
                RECORD_IMAGE.c.image_id.in_(dropped),
            )
        )


def _root(conn, stack_id):
    """The id of the root of the stacks ``stack_id`` is nested in (its
    own if it is one): the stack whose operation rolls back."""
    seen = set()
    while stack_id not in seen:
        seen.add(stack_id)
        owner = conn.execute(
            sa.select(STACK.c.owner_id).where(STACK.c.id == stack_id)
        ).scalar()
        if owner is None:
            break
        stack_id = owner
    return stack_id


def unsettled():
    """Whether the stack a ``rollback`` reference names may still roll
    back (or be updated back by its user): live, and not COMPLETE on its
    newest template (an operation runs, failed or is rolling back)."""
    return sa.exists().where(
        STACK.c.id == REFERENCE.c.holder,
        STACK.c.deleted_at.is_(None),
        sa.or_(
            STACK.c.status != st.Status.COMPLETE,
            STACK.c.prev_raw_template_id != STACK.c.raw_template_id,
        ),
    )


@retry_write
def release_settled_rollbacks():
    """Drop the ``rollback`` references of stacks that settled (or went):
    they keep nothing any more, and would count again during the stack's
    next operation. A pass runs it.

    :returns: how many.
    """
    with transaction(single=True) as conn:
        return conn.execute(
            REFERENCE.delete().where(
                REFERENCE.c.kind == "rollback", sa.not_(unsettled())
            )
        ).rowcount


@retry_write
def hold_stack_images(tenant, stack_ids, kind, holder):
    """``holder`` (a snapshot, a promotion) keeps the images the current
    records of ``stack_ids`` name (the caller passes nested stacks too):
    what restoring or rolling back to it would use again. Images already
    being retired are left out (nothing can bring them back).

    :returns: the ids now held.
    """
    with transaction() as conn:
        ids = list(
            conn.execute(
                sa.select(RECORD_IMAGE.c.image_id)
                .join(RESOURCE, RESOURCE.c.id == RECORD_IMAGE.c.resource_id)
                .join(IMAGE, IMAGE.c.id == RECORD_IMAGE.c.image_id)
                .where(
                    RESOURCE.c.stack_id.in_(list(stack_ids)),
                    RESOURCE.c.role == "current",
                    IMAGE.c.state.in_(st.IMAGE.USABLE),
                )
                .distinct()
                .order_by(RECORD_IMAGE.c.image_id)
            ).scalars()
        )
        if ids:
            use_in(conn, tenant, ids, kind=kind, holder=holder)
    return ids


@retry_write
def release(kind, holder):
    """``holder`` of ``kind`` can no longer bring its images back."""
    with transaction(single=True) as conn:
        return release_in(conn, kind, holder)


def release_in(conn, kind, holder):
    """``release`` in the caller's transaction (the holder's own row
    deleted in the same one).

    :param holder: one holder's id, or a SELECT of holders' ids (every
        holder it yields lets go, in one statement).
    """
    if isinstance(holder, sa.sql.Select):
        which = REFERENCE.c.holder.in_(holder)
    else:
        which = REFERENCE.c.holder == str(holder)
    return conn.execute(
        REFERENCE.delete().where(REFERENCE.c.kind == kind, which)
    ).rowcount


def forget_records(conn, records):
    """In the caller's transaction: drop the references of the records
    ``records`` (a list of ids, or a SELECT of them) that are being
    deleted (history trimmed, stacks purged).

    :returns: how many.
    """
    return conn.execute(
        RECORD_IMAGE.delete().where(RECORD_IMAGE.c.resource_id.in_(records))
    ).rowcount


def forget_orphans(conn):
    """In the caller's transaction: drop the references of records that
    no longer exist (left by versions before ``forget_records``).

    :returns: how many.
    """
    return conn.execute(
        RECORD_IMAGE.delete().where(
            ~sa.exists().where(RESOURCE.c.id == RECORD_IMAGE.c.resource_id)
        )
    ).rowcount
