"""The ``glance`` image store: where app builds put their images.

A plugin of the ``heat_lite.image_stores`` entry point namespace (setup.cfg),
which the engine loads by name (``[apps] image_store``): the engine never
imports a cloud plugin module. It talks to Glance's v2 REST API through
the cached openstacksdk connection of ``client``:

* ``create`` makes the image record (with the build's properties:
  ``heat_lite_app``, ``heat_lite_build``, ``source_ref``,
  ``source_commit``) and returns its id at once, so the caller records it
  before any data moves (an engine that dies mid-upload leaves an id for
  the engine that takes the build over to delete);
* ``upload`` streams a local file (``PUT .../file``) or asks Glance to
  import a URL itself (the ``web-download`` import method);
* ``status`` says where it is (``active``, or a failure);
* ``delete`` removes it (an image already gone counts as deleted; a
  refusal, in use or protected, is ``ImageStoreRefused``);
* ``hide`` / ``unhide`` set ``os_hidden`` (image retention hides an image
  nothing names before it deletes it; a hidden image still boots by id);
* ``find`` lists the ids of the images of a name the acting identity
  sees (its own, shared with it, public), as a lookup by name does.

``on_behalf`` names whom the cloud sees acting: an object whose
``stack`` is ``{"id", "trust"}``, as a resource plugin's is (keystone
mode logs in with that trust; noauth mode uses the configured cloud).
"""

import json

from heat_lite.common import exception
from heat_lite.resources.openstack import client
from heat_lite.resources.openstack.client import sdk_exc

# The property every image a build makes carries (its build's id): the
# only images retention may hide or delete.
BUILT = "heat_lite_build"
# Glance v2's media type of an image update (a JSON patch).
JSON_PATCH = "application/openstack-images-v2.1-json-patch"


class ImageFailed(client.Error):
    """Glance will not make the image active."""


class GlanceImageStore:
    """Images in Glance (v2)."""

    name = "glance"

    @staticmethod
    def _request(on_behalf, method, path, body=None, **kwargs):
        if body is not None:
            kwargs["json"] = body
        response = client.connection(on_behalf).image.request(
            "/images" + path, method, **kwargs
        )
        sdk_exc.raise_from_response(response)
        return response.json() if response.content else {}

    def create(self, on_behalf, name, artifact, properties):
        """Make the image record; return its id.

        :param artifact: ``builders.base.Artifact`` (its formats).
        :param properties: {name: text} stored on the image.
        """
        body = {
            "name": name,
            "disk_format": artifact.disk_format,
            "container_format": artifact.container_format,
        }
        body.update({k: str(v) for k, v in properties.items()})
        return self._request(on_behalf, "POST", "", body)["id"]

    def upload(self, on_behalf, image_id, artifact):
        """Send the artifact's data: a streamed file, or a web-download
        import of its URL (which Glance runs by itself: ``status``)."""
        if artifact.url:
            self._request(
                on_behalf,
                "POST",
                "/%s/import" % image_id,
                {"method": {"name": "web-download", "uri": artifact.url}},
            )
            return
        with open(artifact.path, "rb") as data:
            self._request(
                on_behalf,
                "PUT",
                "/%s/file" % image_id,
                data=data,
                headers={"Content-Type": "application/octet-stream"},
            )

    def status(self, on_behalf, image_id):
        """The image's status: "active", or one it is still on its way
        from (queued, saving, importing).

        :raises ImageFailed: if Glance killed it, its import failed, or
            it is gone.
        """
        try:
            image = self._request(on_behalf, "GET", "/" + image_id)
        except sdk_exc.NotFoundException:
            raise ImageFailed(message="image %s is gone" % image_id) from None
        status = image["status"]
        if status in ("killed", "deleted", "pending_delete") or image.get(
            "os_glance_failed_import"
        ):
            raise ImageFailed(
                message="Glance did not make image %s active (status %s)"
                % (image_id, status)
            )
        return status

    def _check_built(self, on_behalf, image_id):
        """Refuse to retire an image heat_lite did not build: one whose
        Glance record lacks the ``heat_lite_build`` property (stripped,
        or never ours), whatever heat_lite's rows say.

        :returns: False if the image is gone.
        :raises ImageStoreRefused: if it is not one of heat_lite's.
        """
        try:
            image = self._request(on_behalf, "GET", "/" + image_id)
        except sdk_exc.NotFoundException:
            return False
        if not image.get(BUILT):
            raise exception.ImageStoreRefused(
                image=image_id,
                reason="it has no %s property: heat_lite did not build it"
                % BUILT,
            )
        return True

    def delete(self, on_behalf, image_id):
        """Delete the image; one that is gone counts as deleted.

        :raises ImageStoreRefused: if Glance refuses (in use: 409,
            protected: 403), or the image is not one heat_lite built
            (``_check_built``); image retention tries again later.
        """
        if not self._check_built(on_behalf, image_id):
            return
        try:
            self._request(on_behalf, "DELETE", "/" + image_id)
        except sdk_exc.NotFoundException:
            pass
        except (sdk_exc.ConflictException, sdk_exc.ForbiddenException) as exc:
            raise exception.ImageStoreRefused(
                image=image_id, reason=_reason(exc)
            ) from None

    def find(self, on_behalf, name):
        """The ids of the images named ``name`` that ``on_behalf`` sees
        in image lists (its project's, shared with it and accepted,
        public), sorted."""
        found = self._request(on_behalf, "GET", "", params={"name": name})
        return sorted(image["id"] for image in found.get("images", []))

    def hide(self, on_behalf, image_id):
        """Hide the image from image lists (``os_hidden``): it can still
        be booted by id. One that is gone counts as hidden.

        :raises ImageStoreRefused: if it is not one heat_lite built.
        """
        if self._check_built(on_behalf, image_id):
            self._set_hidden(on_behalf, image_id, True)

    def unhide(self, on_behalf, image_id):
        """Show the image in image lists again."""
        self._set_hidden(on_behalf, image_id, False)

    def _set_hidden(self, on_behalf, image_id, hidden):
        try:
            self._request(
                on_behalf,
                "PATCH",
                "/" + image_id,
                data=json.dumps(
                    [{"op": "replace", "path": "/os_hidden", "value": hidden}]
                ),
                headers={"Content-Type": JSON_PATCH},
            )
        except sdk_exc.NotFoundException:
            pass


def _reason(exc):
    """Glance's own words of a refusal."""
    return getattr(exc, "details", None) or str(exc)
