"""Builds of apps (doc/specs/apps.md): their rows, their logs, their
owner.

A push inserts a QUEUED build and, in the same transaction, marks every
older QUEUED build of its branch SUPERSEDED (converge on the newest). A
replayed webhook delivery is refused by the database's unique key
(app_id, delivery_id). A builder worker claims a QUEUED build
(``build_claim``): the claim sets the build's ``lane`` (its branch) and
``slot`` (a number below the app's bound), whose unique keys make a
second running build of the branch, or one too many of the app,
impossible whatever the timing. From then on the build is owned like a
rollout (``db.ownership``): every write of the runner is conditional on
its ``engine_id`` + ``epoch``, and the keeper takes over the running
builds of engine lives that are gone (``builds_to_take_over``,
``build_take_over``). A final state frees the lane and the slot.
"""

import functools
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc

from heat_lite.common import exception
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import models, ownership
from heat_lite.db.session import retry_read, retry_write, transaction

BUILD = models.AppBuild.__table__
LOG = models.AppBuildLog.__table__
APP = models.App.__table__
# The longest chunk of log text one row holds (characters): a MySQL TEXT
# keeps 65535 bytes, at most 4 a character.
_CHUNK = 8192


def _decoded(row):
    row = dict(row._mapping)
    if row.get("verification") is not None:
        row["verification"] = json.loads(row["verification"])
    return row


def _newer_than(build):
    """The clause "a build of the same branch created after ``build``"."""
    return sa.and_(
        BUILD.c.app_id == build["app_id"],
        BUILD.c.branch == build["branch"],
        sa.or_(
            BUILD.c.created_at > build["created_at"],
            sa.and_(
                BUILD.c.created_at == build["created_at"],
                BUILD.c.id > build["id"],
            ),
        ),
    )


def _older_than(build):
    """The clause "a build of the same branch created before ``build``"
    (``_newer_than``'s mirror)."""
    return sa.and_(
        BUILD.c.app_id == build["app_id"],
        BUILD.c.branch == build["branch"],
        sa.or_(
            BUILD.c.created_at < build["created_at"],
            sa.and_(
                BUILD.c.created_at == build["created_at"],
                BUILD.c.id < build["id"],
            ),
        ),
    )


def build_create(values):
    """Store a new QUEUED build; every older QUEUED build of its branch
    becomes SUPERSEDED in the same transaction.

    :param values: id, app_id, tenant, branch, ref, commit, source
        ("push" or "webhook"), delivery_id (None for a push), builder.
    :returns: the stored build.
    :raises DuplicateDelivery: (409) if the app already has a build of
        this delivery id.
    """
    now = models.utcnow()
    row = dict(
        values,
        status=B.QUEUED,
        cancel_requested=False,
        created_at=now,
        updated_at=now,
    )
    try:
        with transaction() as session:
            session.execute(BUILD.insert().values(row))
            _supersede_older(session, row, now)
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateDelivery(
            delivery=values.get("delivery_id")
        ) from None
    return build_get(values["tenant"], values["app_id"], values["id"])


@retry_read
def build_get(tenant, app_id, build_id):
    """The build ``build_id`` of app ``app_id`` in project ``tenant``.

    :raises BuildNotFound: if there is none.
    """
    with transaction(writer=False) as session:
        row = session.execute(
            BUILD.select().where(
                BUILD.c.id == build_id,
                BUILD.c.app_id == app_id,
                BUILD.c.tenant == tenant,
            )
        ).first()
    if row is None:
        raise exception.BuildNotFound(build=build_id)
    return _decoded(row)


@retry_read
def build_get_by_id(build_id):
    """The build ``build_id`` (the runner's read), or None."""
    with transaction(writer=False) as session:
        row = session.execute(
            BUILD.select().where(BUILD.c.id == build_id)
        ).first()
    return None if row is None else _decoded(row)


@retry_read
def build_list(
    tenant, app_id, branch=None, status=None, limit=None, marker=None
):
    """The app's builds, newest first (keyset paging by ``marker``, the
    id of the last build of the previous page).

    :param status: one status or a list of them.
    :raises Invalid: for a marker that is not a build of the app.
    """
    query = BUILD.select().where(
        BUILD.c.tenant == tenant, BUILD.c.app_id == app_id
    )
    if branch is not None:
        query = query.where(BUILD.c.branch == branch)
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        query = query.where(BUILD.c.status.in_(statuses))
    with transaction(writer=False) as session:
        if marker:
            ref = session.execute(
                sa.select(BUILD.c.created_at, BUILD.c.id).where(
                    BUILD.c.id == marker,
                    BUILD.c.app_id == app_id,
                    BUILD.c.tenant == tenant,
                )
            ).first()
            if ref is None:
                raise exception.Invalid(message="Invalid marker: %s" % marker)
            query = query.where(
                sa.or_(
                    BUILD.c.created_at < ref.created_at,
                    sa.and_(
                        BUILD.c.created_at == ref.created_at,
                        BUILD.c.id < ref.id,
                    ),
                )
            )
        query = query.order_by(BUILD.c.created_at.desc(), BUILD.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        return [_decoded(r) for r in session.execute(query)]


@retry_write
def build_cancel(tenant, app_id, build_id):
    """A user's cancel: a QUEUED build is CANCELLED at once; a running
    one gets ``cancel_requested`` (its runner stops and sets CANCELLED).

    :returns: the build as it is now.
    :raises BuildNotFound: if there is no such build.
    :raises BuildFinished: (409) if it has finished already.
    """
    now = models.utcnow()
    mine = sa.and_(
        BUILD.c.id == build_id,
        BUILD.c.app_id == app_id,
        BUILD.c.tenant == tenant,
    )
    with transaction() as session:
        done = session.execute(
            BUILD.update()
            .where(mine, BUILD.c.status == B.QUEUED)
            .values(
                status=B.CANCELLED,
                status_reason="Cancelled",
                cancel_requested=True,
                updated_at=now,
                finished_at=now,
            )
        ).rowcount
        if not done:
            done = session.execute(
                BUILD.update()
                .where(mine, BUILD.c.status.in_(B.RUNNING))
                .values(cancel_requested=True, updated_at=now)
            ).rowcount
    build = build_get(tenant, app_id, build_id)
    if not done and build["status"] in B.FINISHED:
        raise exception.BuildFinished(build=build_id, status=build["status"])
    return build


# Logs -----------------------------------------------------------------------
@retry_write
def build_log_append(build_id, text):
    """Append ``text`` to the build's log (in chunks of at most
    ``_CHUNK`` characters). One writer per build: its runner."""
    if not text:
        return
    with transaction() as session:
        last = session.execute(
            sa.select(LOG.c.seq, LOG.c.position, LOG.c.text)
            .where(LOG.c.build_id == build_id)
            .order_by(LOG.c.seq.desc())
            .limit(1)
        ).first()
        seq, position = (
            (0, 0)
            if last is None
            else (last.seq + 1, last.position + len(last.text))
        )
        rows = []
        for start in range(0, len(text), _CHUNK):
            piece = text[start : start + _CHUNK]
            rows.append(
                {
                    "build_id": build_id,
                    "seq": seq,
                    "position": position,
                    "text": piece,
                }
            )
            seq += 1
            position += len(piece)
        session.execute(LOG.insert(), rows)


@retry_read
def build_log_read(build_id, offset=0, limit=65536):
    """The build's log from character ``offset``, at most ``limit``
    characters of it.

    :returns: (text, the offset to read on from).
    """
    end = offset + limit
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(LOG.c.position, LOG.c.text)
            .where(
                LOG.c.build_id == build_id,
                LOG.c.position < end,
                # chunks at most _CHUNK long: those ending after offset
                LOG.c.position > offset - _CHUNK,
            )
            .order_by(LOG.c.seq)
        ).all()
    text = "".join(r.text for r in rows)
    if not rows:
        return "", offset
    first = rows[0].position
    start = max(offset - first, 0)
    text = text[start : start + limit]
    return text, max(offset, first) + len(text)


@retry_read
def build_log_tail(build_id, limit=4096):
    """The last ``limit`` characters (about: whole chunks, cut) of the
    build's log, read from its last chunks (a build's show)."""
    with transaction(writer=False) as session:
        rows = session.execute(
            sa.select(LOG.c.text)
            .where(LOG.c.build_id == build_id)
            .order_by(LOG.c.seq.desc())
            .limit(limit // _CHUNK + 2)
        ).all()
    return "".join(r.text for r in reversed(rows))[-limit:] if rows else ""


# The runner -----------------------------------------------------------------
@retry_read
def builds_queued(limit=None):
    """Ids, app ids and branches of QUEUED builds, oldest first."""
    query = (
        sa.select(BUILD.c.id, BUILD.c.app_id, BUILD.c.branch)
        .where(BUILD.c.status == B.QUEUED)
        .order_by(BUILD.c.created_at, BUILD.c.id)
    )
    if limit is not None:
        query = query.limit(limit)
    with transaction(writer=False) as session:
        return [dict(r._mapping) for r in session.execute(query)]


@functools.lru_cache(maxsize=64)
def _claimable_query(limit, max_per_app):
    """The statement of ``builds_claimable``, made once per arguments:
    every engine worker runs it each heartbeat, and building it (two
    aliases of the build table, their column proxies) cost 0.7 ms of CPU
    a time. Statements are immutable, and the same object also keeps its
    cache key."""
    running = BUILD.alias("running")
    newer = BUILD.alias("newer")
    lane_busy = sa.exists().where(
        running.c.app_id == BUILD.c.app_id, running.c.lane == BUILD.c.branch
    )
    newer_queued = sa.exists().where(
        newer.c.app_id == BUILD.c.app_id,
        newer.c.branch == BUILD.c.branch,
        newer.c.status == B.QUEUED,
        sa.or_(
            newer.c.created_at > BUILD.c.created_at,
            sa.and_(
                newer.c.created_at == BUILD.c.created_at,
                newer.c.id > BUILD.c.id,
            ),
        ),
    )
    slots_used = (
        sa.select(sa.func.count())
        .where(running.c.app_id == BUILD.c.app_id, running.c.slot.is_not(None))
        .scalar_subquery()
    )
    return (
        sa.select(
            BUILD.c.id,
            BUILD.c.app_id,
            BUILD.c.branch,
            BUILD.c.created_at,
            slots_used.label("running"),
        )
        .where(
            BUILD.c.status == B.QUEUED,
            ~lane_busy,
            ~newer_queued,
            slots_used < max_per_app,
        )
        .order_by(BUILD.c.created_at, BUILD.c.id)
        .limit(limit)
    )


@retry_read
def builds_claimable(limit, max_per_app):
    """The builds a worker may claim now, in one query: of each branch
    with no running build (its lane free), the newest QUEUED build, if
    its app runs fewer than ``max_per_app`` builds; oldest first.

    A wake tries only these (one conditional ``build_claim`` each),
    instead of every QUEUED build whose lane or app is busy.

    :returns: [{id, app_id, branch, created_at, running}], ``running``
        the builds of the app running when read.
    """
    query = _claimable_query(limit, max_per_app)
    with transaction(writer=False) as session:
        return [dict(r._mapping) for r in session.execute(query)]


def build_claim(build, owner, max_per_app):
    """Make ``owner`` (engine_id, epoch) run the QUEUED ``build`` (a
    dict with id, app_id, branch, created_at): BUILDING, in the branch's
    lane and one of the app's ``max_per_app`` slots. Older QUEUED builds
    of the branch (two pushes stored at the same moment can leave one)
    become SUPERSEDED in the same transaction: they would only be built
    to be dropped.

    :returns: True if this caller claimed it; False if it is no longer
        QUEUED, its branch has a running build, or its app has
        ``max_per_app`` running builds.
    """
    for slot in range(max_per_app):
        now = models.utcnow()
        query = (
            BUILD.update()
            .where(
                BUILD.c.id == build["id"],
                BUILD.c.status == B.QUEUED,
                BUILD.c.engine_id.is_(None),
            )
            .values(
                status=B.BUILDING,
                engine_id=owner[0],
                epoch=owner[1],
                lane=build["branch"],
                slot=slot,
                started_at=now,
                updated_at=now,
            )
        )
        try:
            with transaction() as session:
                if session.execute(query).rowcount != 1:
                    return False
                _supersede_older(session, build, now)
                return True
        except db_exc.DBDuplicateEntry as exc:
            if _lane_busy(exc, build):
                return False
    return False


def _supersede_older(session, build, now):
    """Make the QUEUED builds of ``build``'s branch pushed before it
    SUPERSEDED (in the caller's transaction: a push's, or a claim's)."""
    session.execute(
        BUILD.update()
        .where(_older_than(build), BUILD.c.status == B.QUEUED)
        .values(
            status=B.SUPERSEDED,
            status_reason="Superseded by build %s" % build["id"],
            updated_at=now,
            finished_at=now,
        )
    )


def _lane_busy(exc, build):
    """True if a duplicate-key error of a claim was the branch's lane
    (another build of the branch runs), not a slot."""
    columns = set(exc.columns or ())
    if "lane" in columns:
        return True
    if "slot" in columns:
        return False
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(BUILD.c.id).where(
                BUILD.c.app_id == build["app_id"],
                BUILD.c.lane == build["branch"],
            )
        ).first()
    return row is not None


def builds_to_take_over(engine_id):
    """Running builds that no live engine life owns, or that
    ``engine_id`` owns in any epoch: [{id, engine_id, epoch}]."""
    return ownership.to_run(BUILD, B.RUNNING, engine_id)


def build_take_over(build_id, seen, owner):
    """Make ``owner`` the running build's owner if its owner is still
    ``seen`` (engine_id, epoch) as read.

    :returns: True if this caller took it over.
    """
    return ownership.claim(BUILD, B.RUNNING, build_id, seen, owner)


def build_owned(build_id, owner):
    """True while ``owner`` (engine_id, epoch) owns the build."""
    return ownership.owned(BUILD, build_id, owner)


@retry_write
def build_transition(build_id, owner, status, reason=None, **values):
    """Move the build ``owner`` runs to ``status`` (with ``values``:
    image_id, template_id, stack_id, traversal, verification...), if it
    is in a state ``status`` may follow. A final state frees the build's
    lane and slot and stamps ``finished_at``.

    :returns: True if it was written; False if the build is no longer
        owned by ``owner`` or is in a state ``status`` cannot follow.
    """
    before = [s for s in B if B.may_follow(s, status)]
    now = models.utcnow()
    values = dict(values, status=status, updated_at=now)
    if reason is not None:
        values["status_reason"] = reason
    if "verification" in values and values["verification"] is not None:
        values["verification"] = json.dumps(values["verification"])
    if status in B.FINISHED:
        values.update(lane=None, slot=None, finished_at=now)
    with transaction() as session:
        done = session.execute(
            BUILD.update()
            .where(
                BUILD.c.id == build_id,
                ownership.owned_by(BUILD, owner),
                BUILD.c.status.in_(before),
            )
            .values(values)
        )
        return done.rowcount == 1


@retry_write
def build_record(build_id, owner, **values):
    """Write ``values`` (image_id, stack_id, ...) on the build ``owner``
    runs, its status unchanged.

    :returns: True if it was written.
    """
    if values.get("verification") is not None:
        values["verification"] = json.dumps(values["verification"])
    return ownership.update_owned(BUILD, build_id, owner, values)


@retry_read
def build_newer_exists(build):
    """True if a build of ``build``'s branch was pushed after it (and was
    not cancelled): deploying ``build`` would be wasted."""
    with transaction(writer=False) as session:
        row = session.execute(
            sa.select(BUILD.c.id).where(
                _newer_than(build), BUILD.c.status != B.CANCELLED
            )
        ).first()
    return row is not None


@retry_read
def build_gate_superseded_count(build):
    """How many builds of ``build``'s branch, pushed before it and after
    the branch's last build that reached deploying, were built and then
    superseded at the deploy gate (started, then SUPERSEDED: a build
    superseded while queued was never started). The driver's guard
    against a branch that never deploys because every finished image
    finds a newer push waiting."""
    deployed = sa.select(sa.func.max(BUILD.c.created_at)).where(
        _older_than(build), BUILD.c.status.in_(B.REACHED_DEPLOY)
    )
    with transaction(writer=False) as session:
        last = session.execute(deployed).scalar()
        query = sa.select(sa.func.count()).where(
            _older_than(build),
            BUILD.c.status == B.SUPERSEDED,
            BUILD.c.started_at.is_not(None),
        )
        if last is not None:
            query = query.where(BUILD.c.created_at > last)
        return session.execute(query).scalar()


@retry_read
def builds_idle_of(build_ids):
    """The ids among ``build_ids`` of this database's builds that are not
    running (queued again or final): a set. Ids it does not hold are not
    in it: they may be another deployment's, building on the same host."""
    if not build_ids:
        return set()
    with transaction(writer=False) as session:
        return {
            r.id
            for r in session.execute(
                sa.select(BUILD.c.id).where(
                    BUILD.c.id.in_(list(build_ids)),
                    BUILD.c.status.not_in(B.RUNNING),
                )
            )
        }


@retry_read
def build_running_count(app_id):
    """How many builds of the app run (past QUEUED, not final)."""
    with transaction(writer=False) as session:
        return session.execute(
            sa.select(sa.func.count()).where(
                BUILD.c.app_id == app_id, BUILD.c.status.in_(B.RUNNING)
            )
        ).scalar()


# Purge ----------------------------------------------------------------------
@retry_write
def purge_of_deleted_apps(older_than, tenant=None):
    """Hard-delete the builds and logs of apps soft-deleted before
    ``older_than`` (before the apps themselves are purged).

    :returns: how many builds.
    """
    gone = sa.select(APP.c.id).where(
        APP.c.deleted_at.is_not(None), APP.c.deleted_at < older_than
    )
    if tenant is not None:
        gone = gone.where(APP.c.tenant == tenant)
    with transaction() as session:
        builds = sa.select(BUILD.c.id).where(BUILD.c.app_id.in_(gone))
        session.execute(LOG.delete().where(LOG.c.build_id.in_(builds)))
        return session.execute(
            BUILD.delete().where(BUILD.c.app_id.in_(gone))
        ).rowcount
