"""One retention pass over the images heat_lite built.

For each image the pass reads its row (state, generation), asks
``image_needs.needed`` why it is kept, and decides one step (``decide``,
pure): mark it unneeded, hide it, delete it after the grace, or bring it
back when something names it again. Every step is a database move
conditional on the generation the pass read, made *before* the Glance
call it stands for, so a use that comes meanwhile wins (see
``db.image_holds``). The moves of a page are made together, one
transaction (``image_moves.move_page``), then its Glance calls one image
at a time; every Glance call is idempotent, so a pass killed
half-way is finished by the next one:

* hidden in the database but maybe not in Glance (``hidden_at`` unset:
  the call did not confirm) -> hidden again;
* NEEDED again but still hidden in Glance (``hidden_at`` set) -> shown;
* DELETING (the pass decided, Glance did not confirm, or refused: in use,
  protected) -> deleted again; a refusal is kept as ``last_error``.

Glance is reached through an ``ImageStore`` given to the pass (the
engine never imports a cloud plugin).
"""

import collections
import dataclasses
import datetime
import logging
import os
import time
import typing

from heat_lite import conf
from heat_lite.common import app_spec, exception
from heat_lite.common import states as st
from heat_lite.db import apps as db_apps
from heat_lite.db import (
    image_events,
    image_holds,
    image_moves,
    image_needs,
    managed_images,
    models,
)
from heat_lite.db import retention_defaults as db_defaults
from heat_lite.db import session as db_session

CONF = conf.CONF
LOG = logging.getLogger(__name__)
IMAGE = st.IMAGE


class ImageStore(typing.Protocol):
    """What the pass asks of the image service for one image (its
    ``managed_image`` row: id, tenant, app_id). Each call is idempotent;
    an image already gone counts as hidden, shown or deleted. A refusal
    to delete raises ``exception.ImageStoreRefused``."""

    def hide(self, row: dict) -> None: ...

    def unhide(self, row: dict) -> None: ...

    def delete(self, row: dict) -> None: ...


@dataclasses.dataclass(frozen=True)
class Step:
    """One decided step: a move (``to`` set) and/or a Glance call."""

    image_id: str
    tenant: str
    frm: str
    to: str | None = None
    call: str | None = None  # "hide" | "unhide" | "delete"
    why: str = ""


def decide(row, reasons, policy, now):
    """The step for image ``row`` kept by ``reasons`` under the app's
    ``policy`` (``app_spec.retention``), or None."""
    state, needed = row["state"], bool(reasons)

    def step(to=None, call=None, why=""):
        return Step(row["id"], row["tenant"], state, to, call, why)

    if state == IMAGE.NEEDED:
        if needed:
            return step(call="unhide") if row["hidden_at"] else None
        return step(IMAGE.UNNEEDED, why="nothing names it")
    if state == IMAGE.UNNEEDED:
        if needed:
            return step(IMAGE.NEEDED, why="named again")
        if policy["mode"] == "report":
            return None
        return step(IMAGE.HIDDEN, call="hide", why="unneeded")
    if state == IMAGE.HIDDEN:
        if needed:
            return step(IMAGE.NEEDED, call="unhide", why="named again")
        if row["hidden_at"] is None:
            return step(call="hide", why="hide not confirmed")
        due = row["hidden_at"] + datetime.timedelta(seconds=policy["grace"])
        if policy["mode"] == "delete" and now >= due:
            return step(IMAGE.DELETING, call="delete", why="grace over")
        return None
    if state == IMAGE.DELETING:
        return step(call="delete", why="delete not confirmed")
    return None


def _test_hold():
    """Test deployments only (``[engine] test_resource_ledger`` set, as
    OS::Heat::TestResource's holds): while ``<ledger>.hold-retention``
    exists the pass waits between a page's moves (committed) and their
    Glance calls, the window a crash test kills the engine in."""
    ledger = CONF.engine.test_resource_ledger
    if not ledger:
        return
    while os.path.exists(ledger + ".hold-retention"):
        time.sleep(0.1)


class Apps:
    """The apps of the images one pass (or one API call) looks at, each
    row read once: the retention policy and the acting identity of every
    image of an app come from the same read (``app_get``). A deleted
    app is None; its images follow the project's default.

    ``defaults``: {tenant: the keys of the project's default retention}
    (``db.retention_defaults.retention_defaults``, read once by the
    caller); a policy is, key by key, the app's own, else its project's
    default, else the ``[retention]`` option (``app_spec.retention``).
    """

    def __init__(self, tenant_of=None, defaults=None):
        # ``tenant_of(app_id)``: the project the app is read in.
        self._tenant_of = tenant_of or (lambda app_id: None)
        self._defaults = defaults or {}
        self._rows = {}

    def get(self, tenant, app_id):
        """The app row, or None (no app, or deleted)."""
        if app_id is None:
            return None
        if app_id not in self._rows:
            try:
                self._rows[app_id] = db_apps.app_get(tenant, app_id)
            except exception.AppNotFound:
                self._rows[app_id] = None
        return self._rows[app_id]

    def policy(self, app_id, tenant=None):
        """The retention of ``app_id`` (of project ``tenant``: an image
        of no app follows its project's default)."""
        tenant = tenant or self._tenant_of(app_id)
        app = self.get(tenant, app_id)
        return app_spec.retention(
            app["spec"] if app else {}, self._defaults.get(tenant)
        )

    def keep_last(self, app_id):
        return self.policy(app_id)["keep_last"]


class Sweep:
    """Runs passes; ``store`` reaches Glance, ``clock`` says now."""

    def __init__(self, store: ImageStore, clock=models.utcnow):
        self.store = store
        self.clock = clock

    def run(self, dry_run=False, tenant=None):
        """One pass over every image (of ``tenant``), a page at a time.

        :returns: {"decided": [Step, ...]} (dry run), else counts by what
            was done: unneeded, hidden, deleted, revived, shown, lost (a
            use came first), refused (Glance: in use, protected), failed
            (any other error of that image; the next pass retries)
        """
        now = self.clock()
        tenants = {}
        # Every project's default in one query, for the whole pass.
        apps = Apps(tenants.get, db_defaults.retention_defaults(tenant))
        store = self.store
        if hasattr(store, "for_pass"):
            store = store.for_pass(apps)
        done = collections.Counter()
        decided = []
        after = None
        if not dry_run:
            image_holds.release_settled_rollbacks()
        while True:
            page = managed_images.candidates(
                after, limit=CONF.retention.page_size, tenant=tenant
            )
            if not page:
                break
            after = page[-1]["id"]
            tenants.update((r["app_id"], r["tenant"]) for r in page)
            why = image_needs.needed([r["id"] for r in page], apps.keep_last)
            steps = []
            for row in page:
                policy = apps.policy(row["app_id"], row["tenant"])
                step = decide(row, why[row["id"]], policy, now)
                if step is None:
                    continue
                if dry_run:
                    decided.append(step)
                    continue
                steps.append((row, step, policy))
            made = self._move(steps, now, done)
            if any(step.call for _, step, _ in made):
                _test_hold()
            for row, step, policy in made:
                try:
                    done[self._apply(store, row, step, policy, now)] += 1
                except Exception as exc:  # noqa: BLE001 - the next pass retries
                    if db_session.is_unavailable(exc):
                        raise
                    LOG.warning(
                        "Image %s: %s failed: %s", row["id"], step, exc
                    )
                    done["failed"] += 1
        return {"decided": decided} if dry_run else dict(done)

    def _move(self, steps, now, done):
        """Make the page's moves, one transaction for the page (one
        conditional write per kind of move, ``image_moves.move_page``),
        before any Glance call they stand for.

        :returns: the (row, step, policy) whose move was made, or that
            have none (a Glance call only); the others lost to a use
            (counted ``lost``), or failed with the page's transaction.
        """
        groups = {}
        for row, step, policy in steps:
            if step.to is not None:
                values = self._values(step, policy, now)
                key = (step.frm, step.to, tuple(sorted(values.items())))
                groups.setdefault(key, {})[row["id"]] = row["generation"]
        moved = set()
        if groups:
            try:
                moved = image_moves.move_page(
                    [
                        (f, t, dict(v), seen)
                        for (f, t, v), seen in groups.items()
                    ]
                )
            except Exception as exc:  # noqa: BLE001 - the next pass retries
                if db_session.is_unavailable(exc):
                    raise
                LOG.warning("Moving a page of images failed: %s", exc)
                done["failed"] += sum(1 for _, s, _ in steps if s.to)
                return [(r, s, p) for r, s, p in steps if s.to is None]
        made = []
        for row, step, policy in steps:
            if step.to is None:
                made.append((row, step, policy))
            elif row["id"] not in moved:
                done["lost"] += 1
            else:
                LOG.info(
                    "Image %s of project %s: %s -> %s (%s)",
                    row["id"],
                    row["tenant"],
                    step.frm,
                    step.to,
                    step.why,
                )
                made.append((row, step, policy))
        return made

    @staticmethod
    def _values(step, policy, now):
        """What a move to ``step.to`` sets besides the state."""
        values = {}
        if step.to == IMAGE.UNNEEDED:
            values["unneeded_at"] = now
        elif step.to == IMAGE.HIDDEN:
            values["hidden_at"] = None
            if policy["mode"] == "delete":
                values["delete_after"] = now + datetime.timedelta(
                    seconds=policy["grace"]
                )
        elif step.to == IMAGE.NEEDED:
            values["unneeded_at"] = None
            values["delete_after"] = None
        return values

    def _apply(self, store, row, step, policy, now):
        """The Glance call of ``step`` (its move, if any, is made)."""
        image_id = row["id"]
        if step.call is None:
            if step.to == IMAGE.NEEDED:
                image_events.image_event_add(row, "revived", step.why, now)
                return "revived"
            return "unneeded"
        # Each Glance call's confirmation and its image event: one
        # transaction.
        if step.call == "hide":
            store.hide(row)
            image_moves.hidden(
                image_id, now, event=(row, "hidden", step.why, now)
            )
            return "hidden"
        if step.call == "unhide":
            store.unhide(row)
            revived = step.to == IMAGE.NEEDED
            image_moves.unhidden(
                image_id,
                event=(row, "revived", step.why, now) if revived else None,
            )
            return "revived" if revived else "shown"
        try:
            store.delete(row)
        except exception.ImageStoreRefused as exc:
            LOG.warning("Image %s not deleted yet: %s", image_id, exc)
            image_moves.delete_failed(
                image_id, exc, event=(row, "delete_failed", exc, now)
            )
            return "refused"
        image_moves.deleted(
            image_id, now, event=(row, "deleted", step.why, now)
        )
        return "deleted"
