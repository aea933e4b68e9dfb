"""Image retention by reference: which images heat_lite built, who still
names them, and the writes that order a use against a retirement
(doc/specs/image_retention.md).

Two writers meet on the ``managed_image`` row, never on the references
alone. A use (``use``) bumps the row's ``generation`` and makes it
NEEDED before it writes its reference, in one transaction; the
retirement pass reads (id, generation) and moves an image only with a
write conditional on both (``move``). So a use committed while the pass
decided makes the pass's write match nothing, and a use that comes after
the pass moved the image to DELETING matches nothing itself and is
refused (``ImageRetired``). Neither reads under a lock: each is one
conditional write whose row count says who won, on every dialect.

References of resource records live in ``record_image`` and count only
while the record row exists, so trimming or purging records needs no
step here; a snapshot's count only while the snapshot row exists
(deleted with its stack, or by the user). Every other holder (``KINDS``)
removes its own rows with ``release`` when it can no longer bring the
image back.
"""

import re

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import models, paging
from heat_lite.db.session import retry_read, retry_write, transaction

IMAGE = models.ManagedImage.__table__
RECORD_IMAGE = models.RecordImage.__table__
REFERENCE = models.ImageReference.__table__
RESOURCE = models.Resource.__table__
STACK = models.Stack.__table__
SNAPSHOT = models.Snapshot.__table__
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


def _dicts(rows):
    return [dict(r._mapping) for r in rows]


@retry_write
def image_add(values):
    """Record an image heat_lite built, NEEDED and held by its build (a
    ``build`` reference the build releases once it is final: deployed,
    a record then names the image).

    :param values: id (Glance's), tenant, app_id, branch, build_id, name.
    """
    row = dict(values, state=st.IMAGE.NEEDED, generation=0)
    row.setdefault("created_at", models.utcnow())
    try:
        with transaction() as conn:
            conn.execute(IMAGE.insert().values(row))
            if row.get("build_id"):
                conn.execute(
                    REFERENCE.insert().values(
                        image_id=row["id"],
                        kind="build",
                        holder=row["build_id"],
                        tenant=row["tenant"],
                        created_at=row["created_at"],
                    )
                )
    except db_exc.DBDuplicateEntry:
        pass  # a build resumed after its upload was recorded
    return image_get(values["tenant"], values["id"])


@retry_read
def image_get(tenant, image_id):
    """:raises ImageNotFound: unless ``tenant`` has that managed image."""
    with transaction(writer=False) as conn:
        row = conn.execute(
            IMAGE.select().where(
                IMAGE.c.id == image_id, IMAGE.c.tenant == tenant
            )
        ).first()
    if row is None:
        raise exception.ImageNotFound(image=image_id)
    return dict(row._mapping)


# What ``image_list(unused=True)`` shows: the last pass found nothing
# naming them.
UNUSED = (st.IMAGE.UNNEEDED, st.IMAGE.HIDDEN, st.IMAGE.DELETING)


@retry_read
def image_list(
    tenant, app_id=None, state=None, unused=False, limit=None, marker=None
):
    """The project's managed images, newest first (keyset paging).

    :raises Invalid: for a marker that is not an image of the project.
    """
    query = IMAGE.select().where(IMAGE.c.tenant == tenant)
    if app_id is not None:
        query = query.where(IMAGE.c.app_id == app_id)
    if state is not None:
        query = query.where(IMAGE.c.state == state)
    if unused:
        query = query.where(IMAGE.c.state.in_(UNUSED))
    with transaction(writer=False) as conn:
        if marker:
            ref = conn.execute(
                IMAGE.select().where(
                    IMAGE.c.id == marker, IMAGE.c.tenant == tenant
                )
            ).first()
            if ref is None:
                raise exception.Invalid(message="Invalid marker: %s" % marker)
            query = query.where(
                paging.after(ref, [IMAGE.c.created_at, IMAGE.c.id], "desc")
            )
        query = query.order_by(IMAGE.c.created_at.desc(), IMAGE.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        return _dicts(conn.execute(query))


@retry_write
def image_deployed(image_id, when=None):
    """Its build reached DEPLOYED: it counts for ``keep_last`` from now."""
    with transaction(single=True) as conn:
        conn.execute(
            IMAGE.update()
            .where(IMAGE.c.id == image_id, IMAGE.c.deployed_at.is_(None))
            .values(deployed_at=when or models.utcnow())
        )


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


def _unsettled():
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
                REFERENCE.c.kind == "rollback", sa.not_(_unsettled())
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
def unhidden(image_id, event=None):
    """Glance shows the revived image again: forget when it was hidden.

    :param event: (row, action, reason, when) of the image event to write
        in the same transaction (``image_event_add``), or None.
    """
    _confirm(
        IMAGE.update()
        .where(IMAGE.c.id == image_id, IMAGE.c.state == st.IMAGE.NEEDED)
        .values(hidden_at=None),
        event,
    )


def _confirm(statement, event=None):
    """Run a confirmation ``statement`` (Glance did what the row says);
    with ``event``, its image event goes in the same transaction: one
    commit per Glance call, not two.

    :returns: the statement's row count.
    """
    with transaction(single=event is None) as conn:
        count = conn.execute(statement).rowcount
        if event is not None:
            _event_in(conn, *event)
    return count


@retry_write
def hidden(image_id, when=None, event=None):
    """Glance confirmed the image hidden. Also when a use revived it
    meanwhile (NEEDED): the next pass then shows it again.

    :param event: as ``unhidden``'s.
    """
    _confirm(
        IMAGE.update()
        .where(
            IMAGE.c.id == image_id,
            IMAGE.c.state.in_((st.IMAGE.HIDDEN, st.IMAGE.NEEDED)),
            IMAGE.c.hidden_at.is_(None),
        )
        .values(hidden_at=when or models.utcnow()),
        event,
    )


@retry_write
def deleted(image_id, when=None, event=None):
    """Glance confirmed the DELETING image gone (no use can name it any
    more, so no generation is needed).

    :param event: as ``unhidden``'s.
    """
    _confirm(
        IMAGE.update()
        .where(IMAGE.c.id == image_id, IMAGE.c.state == st.IMAGE.DELETING)
        .values(
            state=st.IMAGE.DELETED,
            deleted_at=when or models.utcnow(),
            last_error=None,
        ),
        event,
    )


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
        sa.and_(REFERENCE.c.kind == "rollback", _unsettled()),
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


@retry_read
def candidates(after_id=None, limit=500, tenant=None):
    """A page of managed images not yet DELETED, by id (the pass walks
    them in pages: bounded memory at any count)."""
    query = IMAGE.select().where(IMAGE.c.state != st.IMAGE.DELETED)
    if after_id is not None:
        query = query.where(IMAGE.c.id > after_id)
    if tenant is not None:
        query = query.where(IMAGE.c.tenant == tenant)
    with transaction(writer=False) as conn:
        return _dicts(conn.execute(query.order_by(IMAGE.c.id).limit(limit)))


def moves_in(conn, from_state, to_state, seen, **values):
    """In the caller's transaction ``conn``: move to ``to_state`` (with
    ``values``) every image of ``seen`` ({image id: the generation the
    pass read}) that is still in ``from_state`` at that generation.

    Two statements for any number of images, on every dialect (MariaDB
    has no UPDATE ... RETURNING): a locking read of the rows still in
    ``from_state``, then one UPDATE of those whose generation is the one
    read. The lock is what makes the answer exact: a use that committed
    first is seen (a locking read waits for it, then reads its row: the
    bumped generation, NEEDED), and a use that comes after waits for
    this transaction and then finds the row moved. Rows are locked by
    id, the order every pass takes them in.

    :returns: the ids moved, sorted; the others lost to a use (or to
        another pass).
    """
    if not st.IMAGE.may_follow(from_state, to_state):
        raise ValueError("image %s -> %s" % (from_state, to_state))
    if not seen:
        return []
    current = conn.execute(
        sa.select(IMAGE.c.id, IMAGE.c.generation)
        .where(IMAGE.c.id.in_(list(seen)), IMAGE.c.state == from_state)
        .order_by(IMAGE.c.id)
        .with_for_update()
    ).all()
    ids = [i for i, gen in current if seen[i] == gen]
    if ids:
        conn.execute(
            IMAGE.update()
            .where(IMAGE.c.id.in_(ids), IMAGE.c.state == from_state)
            .values(dict(values, state=to_state))
        )
    return ids


def move_in(conn, image_id, generation, from_state, to_state, **values):
    """``move`` in the caller's transaction ``conn``."""
    return bool(
        moves_in(conn, from_state, to_state, {image_id: generation}, **values)
    )


@retry_write
def move(image_id, generation, from_state, to_state, **values):
    """Move an image the pass read at ``generation`` in ``from_state``
    to ``to_state`` (with ``values``: timestamps, ``last_error``).

    :returns: False if a use (or another pass) changed it meanwhile.
    """
    with transaction() as conn:
        return move_in(
            conn, image_id, generation, from_state, to_state, **values
        )


@retry_write
def move_page(moves):
    """The moves a pass decided for one page, in one transaction.

    :param moves: (from_state, to_state, values, {image id: generation
        read}) each; the images of one are moved alike (``moves_in``).
    :returns: the set of image ids moved.
    """
    moved = set()
    with transaction() as conn:
        for from_state, to_state, values, seen in moves:
            moved.update(moves_in(conn, from_state, to_state, seen, **values))
    return moved


@retry_write
def delete_failed(image_id, error, event=None):
    """Glance refused to delete a DELETING image: keep why, retry later.

    :param event: as ``unhidden``'s.
    """
    _confirm(
        IMAGE.update()
        .where(IMAGE.c.id == image_id, IMAGE.c.state == st.IMAGE.DELETING)
        .values(last_error=str(error)[:2000]),
        event,
    )


@retry_read
def revived_rows(image_ids):
    """The rows of ``image_ids`` a use just revived (``use`` returned
    them) that are still NEEDED: what the use shows again in Glance
    before its operation runs. ``hidden_at`` as read here is what
    ``unhidden_as_seen`` compares with."""
    if not image_ids:
        return []
    with transaction(writer=False) as conn:
        return _dicts(
            conn.execute(
                IMAGE.select()
                .where(
                    IMAGE.c.id.in_(list(image_ids)),
                    IMAGE.c.state == st.IMAGE.NEEDED,
                )
                .order_by(IMAGE.c.id)
            )
        )


@retry_write
def unhidden_as_seen(image_id, seen_hidden_at, event=None):
    """``unhidden`` for a use that read ``seen_hidden_at`` (``revived_rows``)
    before it showed the image in Glance.

    A pass that hid the image without confirming it (``hidden_at`` unset)
    may still call Glance's hide concurrently and then record it
    (``hidden``). If that record came after the use's read, the pass's
    hide may have reached Glance after the use's un-hide: ``hidden_at``
    is then left set, so the next pass shows the image again (an extra,
    idempotent call) rather than believe a hidden image shown.

    :param event: as ``unhidden``'s.
    :returns: whether the row now says the image is shown.
    """
    if seen_hidden_at is None:
        seen = IMAGE.c.hidden_at.is_(None)
    else:
        seen = IMAGE.c.hidden_at == seen_hidden_at
    return bool(
        _confirm(
            IMAGE.update()
            .where(
                IMAGE.c.id == image_id,
                IMAGE.c.state == st.IMAGE.NEEDED,
                seen,
            )
            .values(hidden_at=None),
            event,
        )
    )


IMAGE_EVENT = models.ImageEvent.__table__
# What an image event says retention did.
EVENT_ACTIONS = st.IMAGE_EVENTS


@retry_write
def image_event_add(row, action, reason=None, when=None):
    """Record that retention did ``action`` to the image of ``row`` (its
    ``managed_image`` row: id, tenant, app_id)."""
    with transaction(single=True) as conn:
        _event_in(conn, row, action, reason, when)


def _event_in(conn, row, action, reason=None, when=None):
    """``image_event_add`` in the caller's transaction."""
    if action not in EVENT_ACTIONS:
        raise ValueError("unknown image event %r" % action)
    conn.execute(
        IMAGE_EVENT.insert().values(
            image_id=row["id"],
            tenant=row["tenant"],
            app_id=row.get("app_id"),
            action=action,
            reason=None if reason is None else str(reason)[:2000],
            created_at=when or models.utcnow(),
        )
    )


@retry_read
def image_events(tenant, image_id=None, app_id=None, limit=100, marker=None):
    """The newest ``limit`` image events of the project (of one image,
    or of one app's images), newest first.

    :param marker: an event id: only the events older than it (the next
        page; ids only grow).
    """
    query = IMAGE_EVENT.select().where(IMAGE_EVENT.c.tenant == tenant)
    if image_id is not None:
        query = query.where(IMAGE_EVENT.c.image_id == image_id)
    if app_id is not None:
        query = query.where(IMAGE_EVENT.c.app_id == app_id)
    if marker is not None:
        query = query.where(IMAGE_EVENT.c.id < marker)
    query = query.order_by(IMAGE_EVENT.c.id.desc()).limit(limit)
    with transaction(writer=False) as conn:
        return _dicts(conn.execute(query))
