"""Snapshots of an OS::Nova::Server (Heat's behaviour).

A stack snapshot makes an image of the server (Nova's createImage, named
after the server's physical name) and waits for Glance to show it
``active``; its ID is kept in the resource's data as
``snapshot_image_id`` and so in the snapshot's data. Restoring the
snapshot gives the server that image, which rebuilds it in place (or
replaces it, per ``image_update_policy``). Deleting the snapshot deletes
the image; one already gone counts as deleted.
"""

from heat_lite.resources.openstack import client
from heat_lite.resources.openstack.client import sdk_exc

IMAGE_KEY = "snapshot_image_id"


def start(plugin):
    """Ask Nova for the image; return its ID (the poll's cookie)."""
    image_id = (
        plugin._conn()
        .compute.create_server_image(
            plugin.resource_id, plugin.physical_resource_name()
        )
        .id
    )
    plugin.data_set(IMAGE_KEY, image_id)
    return image_id


def done(plugin, image_id):
    """True once the image is active.

    :raises Error: for an image that went to ``killed``/``deleted``.
    """
    try:
        image = plugin._conn().image.get_image(image_id)
    except sdk_exc.NotFoundException:
        return False  # not registered in Glance yet
    status = (image.status or "").lower()
    if status == "active":
        return True
    if status in ("killed", "deleted", "deactivated"):
        raise client.Error(
            message="Snapshot image %s went %s" % (image_id, status)
        )
    return False


def delete(plugin, entry):
    """Delete the image of a snapshot entry (``resource_data``)."""
    image_id = (entry.get("resource_data") or {}).get(IMAGE_KEY)
    if image_id:
        plugin._conn().image.delete_image(image_id, ignore_missing=True)


def restore_properties(entry):
    """The properties a restore gives the server: its snapshot image."""
    image_id = (entry.get("resource_data") or {}).get(IMAGE_KEY)
    return {"image": image_id} if image_id else {}
