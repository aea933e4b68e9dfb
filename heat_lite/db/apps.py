"""Apps (doc/specs/apps.md): their rows, per project.

Names are unique among a project's live apps by the database's own key
(tenant, live_name): two concurrent creates of one name cannot both
succeed. Every update is conditional on the ``version`` the caller read,
so of two concurrent updates one wins and the other gets a 409 instead
of silently undoing the first. Rows are soft-deleted (``deleted_at``
set, ``live_name`` cleared, so the name is free again) and removed by
``heat-lite-manage purge_deleted``.
"""

import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.db import image_holds, models, paging
from heat_lite.db.session import retry_read, retry_write, transaction

APP = models.App.__table__
STACK = models.Stack.__table__
# What app_update's ``webhook_secret`` defaults to: leave it as it is.
KEEP = object()
_SORT_KEYS = {
    "name": APP.c.name,
    "created_at": APP.c.created_at,
    "updated_at": APP.c.updated_at,
}


def _decoded(row):
    row = dict(row._mapping)
    row["spec"] = json.loads(row["spec"])
    return row


def app_create(values, spec, webhook_secret=None, images=()):
    """Store a new app.

    :param values: id, tenant, name, username, and trust_id (the stored
        form of the trust its builds act through) if it has one.
    :param spec: the normalised app (``common.app_spec``) without secret.
    :param webhook_secret: the secret, already encrypted, or None.
    :param images: the image IDs or names its parameter defaults and
        environment give (``app_spec.named_images``): the app keeps those
        heat_lite built (image retention's ``app`` references), written
        in the same transaction.
    :returns: the stored app.
    :raises AppExists: if a live app of the project has the name.
    :raises ImageRetired: if one of ``images`` is being deleted (nothing
        is stored).
    """
    now = models.utcnow()
    row = dict(
        values,
        live_name=values["name"],
        spec=json.dumps(spec),
        webhook_secret=webhook_secret,
        version=1,
        created_at=now,
        updated_at=now,
    )
    try:
        with transaction() as session:
            session.execute(APP.insert().values(row))
            _name_images(session, values["tenant"], values["id"], images)
    except db_exc.DBDuplicateEntry:
        raise exception.AppExists(app=values["name"]) from None
    return app_get(values["tenant"], values["id"])


@retry_read
def app_get(tenant, app):
    """The live app of project ``tenant`` whose id or name is ``app``.

    :raises AppNotFound: if there is none.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            APP.select().where(
                APP.c.tenant == tenant,
                APP.c.deleted_at.is_(None),
                sa.or_(APP.c.id == app, APP.c.live_name == app),
            )
        ).first()
    if row is None:
        raise exception.AppNotFound(app=app)
    return _decoded(row)


@retry_read
def app_get_all(
    tenant, limit=None, marker=None, sort_key=None, sort_dir="desc"
):
    """The live apps of ``tenant``, a page at a time (keyset paging).

    :param marker: id of the last app of the previous page.
    :raises Invalid: for a marker that is not an app of the project.
    """
    column = _SORT_KEYS.get(sort_key, APP.c.created_at)
    query = APP.select().where(
        APP.c.tenant == tenant, APP.c.deleted_at.is_(None)
    )
    with transaction(writer=False) as session:
        query = paging.page(
            session,
            query,
            [column, APP.c.id],
            sort_dir,
            limit,
            marker,
            lambda m: APP.select().where(
                APP.c.id == m, APP.c.tenant == tenant
            ),
        )
        return [_decoded(r) for r in session.execute(query)]


def _live(tenant, app_id):
    return sa.and_(
        APP.c.id == app_id, APP.c.tenant == tenant, APP.c.deleted_at.is_(None)
    )


def _name_images(session, tenant, app_id, images):
    """In ``session``: the app names exactly ``images`` from now on (its
    references to others end; a hidden one is revived, the next pass
    shows it again)."""
    image_holds.release_in(session, "app", app_id)
    if images:
        image_holds.use_in(session, tenant, images, kind="app", holder=app_id)


def _changed(session, tenant, app_id):
    """The error of a conditional write that matched no row."""
    live = session.execute(
        sa.select(APP.c.id).where(_live(tenant, app_id))
    ).first()
    if live is None:
        return exception.AppNotFound(app=app_id)
    return exception.AppChanged(app=app_id)


@retry_write
def app_update(
    tenant, app_id, version, spec, webhook_secret=KEEP, images=None
):
    """Replace the app's spec (and secret) if it is still at ``version``.

    :param webhook_secret: the new secret, encrypted; None removes it;
        KEEP leaves it.
    :param images: as ``app_create``'s, replacing the app's references
        (None: leave them).
    :returns: the updated app.
    :raises AppChanged: (409) if it was updated since ``version``.
    :raises AppNotFound: if it is gone.
    :raises ImageRetired: if one of ``images`` is being deleted (nothing
        is changed).
    """
    values = {
        "spec": json.dumps(spec),
        "version": version + 1,
        "updated_at": models.utcnow(),
    }
    if webhook_secret is not KEEP:
        values["webhook_secret"] = webhook_secret
    with transaction() as session:
        done = session.execute(
            APP.update()
            .where(_live(tenant, app_id), APP.c.version == version)
            .values(values)
        ).rowcount
        if not done:
            raise _changed(session, tenant, app_id)
        if images is not None:
            _name_images(session, tenant, app_id, images)
    return app_get(tenant, app_id)


@retry_write
def app_delete(tenant, app_id):
    """Soft-delete the live app ``app_id`` of ``tenant``; its name is
    free again at once, and the images it named are kept by it no more.

    :raises AppNotFound: if there is no such live app.
    """
    now = models.utcnow()
    with transaction() as session:
        done = session.execute(
            APP.update()
            .where(_live(tenant, app_id))
            .values(
                deleted_at=now,
                updated_at=now,
                live_name=None,
                trust_id=None,
                version=APP.c.version + 1,
            )
        ).rowcount
        if done:
            image_holds.release_in(session, "app", app_id)
    if not done:
        raise exception.AppNotFound(app=app_id)


@retry_write
def app_trust_set(tenant, app_id, stored):
    """Give the live app ``app_id`` the trust ``stored`` unless it has
    one (an app created before trusts, or in noauth mode).

    :returns: False if it had one or is gone (``stored`` is not kept).
    """
    with transaction() as session:
        return (
            session.execute(
                APP.update()
                .where(_live(tenant, app_id), APP.c.trust_id.is_(None))
                .values(trust_id=stored)
            ).rowcount
            == 1
        )


@retry_read
def trust_borrowers(stored):
    """The ids of the live root stacks whose trust is ``stored`` (the
    borrowed form of an app's trust: stacks its builds created)."""
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(STACK.c.id).where(
                STACK.c.trust_id == stored,
                STACK.c.owner_id.is_(None),
                STACK.c.deleted_at.is_(None),
            )
        )
        return [r.id for r in rows]


@retry_write
def trust_hand_over(stored, new):
    """Every live stack (root or nested) whose trust is ``stored`` gets
    ``new`` instead, in one statement: a stack that borrowed an app's
    trust gets a trust of its own before the app's is deleted.

    :returns: how many stacks.
    """
    with transaction() as session:
        return session.execute(
            STACK.update()
            .where(STACK.c.trust_id == stored, STACK.c.deleted_at.is_(None))
            .values(trust_id=new)
        ).rowcount


@retry_write
def purge_deleted(older_than, tenant=None):
    """Hard-delete the apps soft-deleted before ``older_than``.

    :returns: how many.
    """
    query = APP.delete().where(
        APP.c.deleted_at.is_not(None), APP.c.deleted_at < older_than
    )
    if tenant is not None:
        query = query.where(APP.c.tenant == tenant)
    with transaction() as session:
        return session.execute(query).rowcount
