"""The retirement of managed images: the pass's conditional moves
between states (NEEDED, UNNEEDED, HIDDEN, DELETING, DELETED), and the
confirmations of what Glance did (doc/specs/image_retention.md; the
writes a use orders itself against are in ``image_holds``)."""

import sqlalchemy as sa

from heat_lite.common import states as st
from heat_lite.db import image_events, models
from heat_lite.db.managed_images import dicts
from heat_lite.db.session import retry_read, retry_write, transaction

IMAGE = models.ManagedImage.__table__


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
            image_events.event_in(conn, *event)
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
        return dicts(
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
