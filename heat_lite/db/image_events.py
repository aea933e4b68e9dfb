"""What retention did to each managed image (``image_event`` rows):
the history ``openstack app image events`` shows."""

from heat_lite.common import states as st
from heat_lite.db import models
from heat_lite.db.managed_images import dicts
from heat_lite.db.session import retry_read, retry_write, transaction

IMAGE_EVENT = models.ImageEvent.__table__

# What an image event says retention did.
EVENT_ACTIONS = st.IMAGE_EVENTS


@retry_write
def image_event_add(row, action, reason=None, when=None):
    """Record that retention did ``action`` to the image of ``row`` (its
    ``managed_image`` row: id, tenant, app_id)."""
    with transaction(single=True) as conn:
        event_in(conn, row, action, reason, when)


def event_in(conn, row, action, reason=None, when=None):
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
        return dicts(conn.execute(query))
