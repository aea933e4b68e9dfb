"""The apps' RPC endpoint (on the ``[engine] topic``): create, list,
show, update and delete of a project's apps.

The body is checked again here (``common.app_spec``) for any RPC caller
other than the API. Every call acts in the caller's project only. The
webhook secret is encrypted before it is stored (``common.crypt``) and
never leaves this module: answers say only whether there is one.
"""

import uuid

import oslo_messaging as messaging
from oslo_utils import uuidutils

from heat_lite.common import app_spec, crypt, exception
from heat_lite.db import apps as db_apps
from heat_lite.db import retention_defaults as db_defaults
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import rpcapi, trusts
from heat_lite.engine.endpoint.base import expected
from heat_lite.engine.endpoint.views import timestamp
from heat_lite.engine.fleet.app import driver as app_driver

MAX_LIMIT = 1000


def _check_stacks(ctxt, spec, before=None):
    """Every newly adopted stack must be a live stack of the caller's
    project (400 otherwise: the body names something that is not there).
    Those ``before`` (the app's, on an update) are not checked again: a
    stack deleted since must not block every other change of the app."""
    before = before or {}
    for branch, name in spec["stacks"].items():
        if before.get(branch) == name:
            continue
        try:
            db_stacks.stack_get_by_name(ctxt.project_id, name)
        except exception.StackNotFound:
            raise exception.InvalidApp(
                reason="stacks.%s: there is no stack %s in this project"
                % (branch, name)
            ) from None


def check_limit(limit):
    """``limit`` (None: no limit) if it is an integer from 0 to
    MAX_LIMIT.

    :raises Invalid: otherwise.
    """
    if limit is not None and (
        type(limit) is not int or not 0 <= limit <= MAX_LIMIT
    ):
        raise exception.Invalid(
            message="limit must be an integer from 0 to %d" % MAX_LIMIT
        )
    return limit


def _seal(secret):
    return crypt.encrypt(secret) if secret is not None else None


def _spec_of(checked):
    return {k: v for k, v in checked.items() if k != "webhook_secret"}


class AppEndpoint:
    """App requests from the API (or any RPC client).

    :param services: the engine's plugin services (the acting identity
        of the image lookups).
    :param store: a callable giving the image store (``[apps]
        image_store``), asked only when an app names an image by name.
    """

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, services=None, store=app_driver.configured_store):
        self.services = services
        self.store = store

    def _images(self, app, checked):
        """The images the app's template names (``named_images``), names
        resolved as the app's identity sees them in Glance."""
        refs = app_spec.named_images(checked)
        if all(uuidutils.is_uuid_like(ref) for ref in refs):
            return refs
        who = app_driver.on_behalf(app, self.services)
        return app_driver.resolve_names(self.store(), who, refs)

    @expected
    def create_app(self, ctxt, body):
        checked = app_spec.parse(body)
        _check_stacks(ctxt, checked)
        # The trust first: a create Keystone refuses leaves no app.
        trust = trusts.create(ctxt)
        app_id = str(uuid.uuid4())
        try:
            images = self._images({"id": app_id, "trust_id": trust}, checked)
            row = db_apps.app_create(
                {
                    "id": app_id,
                    "tenant": ctxt.project_id,
                    "name": checked["name"],
                    "username": ctxt.user_id,
                    "trust_id": trust,
                },
                _spec_of(checked),
                _seal(checked["webhook_secret"]),
                images=images,
            )
        except Exception:
            trusts.delete(trust)
            raise
        return view(row, True, _project_default(ctxt.project_id))

    @expected
    def list_apps(
        self, ctxt, limit=None, marker=None, sort_key=None, sort_dir=None
    ):
        check_limit(limit)
        if sort_key is not None and sort_key not in app_spec.SORT_KEYS:
            raise exception.Invalid(
                message="sort_key must be one of %s"
                % ", ".join(app_spec.SORT_KEYS)
            )
        if sort_dir not in (None, "asc", "desc"):
            raise exception.Invalid(message="sort_dir must be asc or desc")
        rows = db_apps.app_get_all(
            ctxt.project_id,
            limit=limit,
            marker=marker,
            sort_key=sort_key,
            sort_dir=sort_dir or "desc",
        )
        default = _project_default(ctxt.project_id)
        return [view(r, project_default=default) for r in rows]

    @expected
    def show_app(self, ctxt, app):
        row = db_apps.app_get(ctxt.project_id, app)
        return view(row, True, _project_default(ctxt.project_id))

    @expected
    def update_app(self, ctxt, app, body):
        """Lay ``body`` over the app and check the whole again; written
        only if nobody updated the app since it was read here (409)."""
        row = db_apps.app_get(ctxt.project_id, app)
        _ensure_trust(ctxt, row)
        current = dict(row["spec"], name=row["name"])
        checked = app_spec.parse(app_spec.merge(current, body))
        _check_stacks(ctxt, checked, row["spec"]["stacks"])
        secret = (
            _seal(checked["webhook_secret"])
            if "webhook_secret" in body
            else db_apps.KEEP
        )
        updated = db_apps.app_update(
            ctxt.project_id, row["id"], row["version"], _spec_of(checked),
            secret, images=self._images(row, checked),
        )  # fmt: skip
        return view(updated, True, _project_default(ctxt.project_id))

    @expected
    def delete_app(self, ctxt, app):
        """Delete the app and its trust (Heat's rule: a trust that may
        still exist fails the delete, which can be asked again).

        The stacks its builds created live on: they borrowed the app's
        trust, so each first gets a trust of its own from the caller of
        this delete, who chose to keep them (as ``trusts.ensure`` gives
        one to a stack that has none). If Keystone refuses that trust,
        nothing is deleted. A build still running keeps the app it read:
        once the trust is gone its upload or stack operation fails.
        """
        row = db_apps.app_get(ctxt.project_id, app)
        _release_trust(ctxt, row.get("trust_id"))
        db_apps.app_delete(ctxt.project_id, row["id"])


def _ensure_trust(ctxt, row):
    """An app without a trust (created before them) gets one from the
    caller updating it, as ``trusts.ensure`` does for a stack."""
    if row.get("trust_id") or not trusts.enabled():
        return
    stored = trusts.create(ctxt)
    if stored and not db_apps.app_trust_set(
        ctxt.project_id, row["id"], stored
    ):
        trusts.delete(stored)


def _release_trust(ctxt, stored):
    if not stored:
        return
    lent = trusts.lent(stored)
    if lent != stored and db_apps.trust_borrowers(lent):
        own = trusts.create(ctxt)
        db_apps.trust_hand_over(lent, own)
    trusts.delete(stored)


def _project_default(tenant):
    """The keys of the project's default retention (one query)."""
    return db_defaults.retention_defaults(tenant).get(tenant)


def view(row, detail=False, project_default=None):
    """The API's app dict: never the secret, only whether there is one;
    the template, files and environment only in ``detail``.
    ``project_default``: the keys of the project's default retention."""
    spec = row["spec"]
    result = {
        "id": row["id"],
        "name": row["name"],
        "project": row["tenant"],
        "source": spec["source"],
        "builder": spec["builder"],
        "image_parameter": spec["image_parameter"],
        "stacks": spec["stacks"],
        "verify": spec["verify"],
        # With the project's default and the [retention] options filled
        # in: what the pass applies.
        "retention": app_spec.retention(spec, project_default),
        "webhook": row["webhook_secret"] is not None,
        "version": row["version"],
        "user": row["username"],
        "created_at": timestamp(row["created_at"]),
        "updated_at": timestamp(row["updated_at"]),
    }
    if detail:
        result.update(
            template=spec["template"],
            files=spec["files"],
            environment=spec["environment"],
        )
    return result
