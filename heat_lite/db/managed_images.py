"""The images heat_lite built (``managed_image`` rows): recording one,
reading and listing a project's, and the pages the retention pass walks
(doc/specs/image_retention.md). Who names an image is ``image_holds``;
whether it may go, ``image_needs``; its retirement, ``image_moves``.
"""

from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.common import states as st
from heat_lite.db import models, paging
from heat_lite.db.session import retry_read, retry_write, transaction

IMAGE = models.ManagedImage.__table__
REFERENCE = models.ImageReference.__table__


def dicts(rows):
    """Rows as plain dicts."""
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
        return dicts(conn.execute(query))


@retry_write
def image_deployed(image_id, when=None):
    """Its build reached DEPLOYED: it counts for ``keep_last`` from now."""
    with transaction(single=True) as conn:
        conn.execute(
            IMAGE.update()
            .where(IMAGE.c.id == image_id, IMAGE.c.deployed_at.is_(None))
            .values(deployed_at=when or models.utcnow())
        )


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
        return dicts(conn.execute(query.order_by(IMAGE.c.id).limit(limit)))
