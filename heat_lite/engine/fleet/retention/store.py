"""The retention pass's image store: the one app builds upload with
(``[apps] image_store``, loaded by name), acting for the app that built
each image, as its builds do (``fleet.app.driver.on_behalf``)."""

from heat_lite.common import exception
from heat_lite.db import apps as db_apps
from heat_lite.engine.fleet.app import driver as app_driver


class AppImages:
    """``sweep.ImageStore`` over a build image store.

    :param store: a callable giving the image store (loaded on first
        use, so an engine that never retires an image never loads it).
    :param services: the engine's plugin services (the acting identity).
    """

    def __init__(self, store, services=None):
        self._store = store
        self.services = services

    def _on_behalf(self, row):
        app = {"id": row["app_id"] or row["id"], "trust_id": None}
        if row["app_id"] is not None:
            try:
                app = db_apps.app_get(row["tenant"], row["app_id"])
            except exception.AppNotFound:
                pass  # deleted: the configured cloud acts (noauth)
        return app_driver.on_behalf(app, self.services)

    def hide(self, row):
        self._store().hide(self._on_behalf(row), row["id"])

    def unhide(self, row):
        self._store().unhide(self._on_behalf(row), row["id"])

    def delete(self, row):
        self._store().delete(self._on_behalf(row), row["id"])
