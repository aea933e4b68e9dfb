"""The retention pass's image store: the one app builds upload with
(``[apps] image_store``, loaded by name), acting for the app that built
each image, as its builds do (``fleet.app.driver.on_behalf``)."""

import functools
import logging

from heat_lite import conf
from heat_lite.db import image_moves
from heat_lite.engine.fleet.app import driver as app_driver
from heat_lite.engine.fleet.retention import sweep

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class AppImages:
    """``sweep.ImageStore`` over a build image store.

    :param store: a callable giving the image store (loaded on first
        use, so an engine that never retires an image never loads it).
    :param services: the engine's plugin services (the acting identity).
    :param apps: a ``sweep.Apps``, the app rows read once (per pass:
        ``for_pass``); None reads them afresh.
    """

    def __init__(self, store, services=None, apps=None):
        self._store = store
        self.services = services
        self.apps = apps

    def for_pass(self, apps):
        """This store acting with the app rows one pass has read."""
        return AppImages(self._store, self.services, apps)

    def _on_behalf(self, row):
        app = (self.apps or sweep.Apps()).get(row["tenant"], row["app_id"])
        if app is None:
            # No app, or deleted: the configured cloud acts (noauth).
            app = {"id": row["app_id"] or row["id"], "trust_id": None}
        return app_driver.on_behalf(app, self.services)

    def hide(self, row):
        self._store().hide(self._on_behalf(row), row["id"])

    def unhide(self, row):
        self._store().unhide(self._on_behalf(row), row["id"])

    def delete(self, row):
        self._store().delete(self._on_behalf(row), row["id"])


@functools.cache
def _configured_store():
    """The build image store (``[apps] image_store``), loaded once."""
    return app_driver.load_store(CONF.apps.image_store)


def show_again(image_ids, services=None, store=None):
    """Before an operation that uses them runs: show the images a use
    revived (``image_holds.use`` moved them HIDDEN -> NEEDED, bumping the
    generation, so no pass deletes them now) in Glance again, then record
    it. The database move comes first: a pass that decided to delete one
    finds its conditional write matching nothing.

    :param store: the image store (None: ``[apps] image_store``).
    :raises: what the image store raises (the operation is not run).
    """
    rows = image_moves.revived_rows(image_ids)
    if not rows:
        return []
    images = AppImages(
        (lambda: store) if store is not None else _configured_store,
        services,
        sweep.Apps(),
    )
    for row in rows:
        images.unhide(row)
        image_moves.unhidden_as_seen(
            row["id"],
            row["hidden_at"],
            event=(row, "revived", "named again by a use", None),
        )
        LOG.info(
            "Image %s of project %s shown again for its use",
            row["id"],
            row["tenant"],
        )
    return [row["id"] for row in rows]
