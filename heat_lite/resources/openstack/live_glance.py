"""The live state of an ``OS::Glance::WebImage`` for drift detection
(``Resource.live_state``; ``engine.drift`` compares it).

One GET of the image (a 404, or status ``deleted``, is
``ResourceGone``); a second, of its members, only when the template set
``members``. The Glance fields the plugin sends (``glance.FIELDS``)
come back as Glance shows them, ``tags`` and ``members`` as sets (the
stored list while they hold the same items), ``extra_properties`` as
the keys the template set (a key removed reads as missing; keys
others added are not the template's), and ``active`` as whether the
image is active (deactivated: False). ``location`` is where the data
came from, not a field Glance keeps: never compared.
"""

from heat_lite.resources import base
from heat_lite.resources.openstack import client

sdk_exc = client.sdk_exc


def image_state(plugin):
    """{property: live value} of the plugin's image.

    :raises base.ResourceGone: the image is gone.
    """
    from heat_lite.resources.openstack import glance

    try:
        image = plugin._image()
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    if image.get("status") in ("deleted", "pending_delete"):
        raise base.ResourceGone()
    props = plugin.properties
    state = {k: image.get(k) for k in glance.FIELDS if k not in ("tags", "id")}
    state["tags"] = _as_set(props.get("tags"), image.get("tags"))
    stored = props.get("extra_properties") or {}
    state["extra_properties"] = {
        k: v if str(v) == image.get(k) else image.get(k)
        for k, v in stored.items()
    }
    if image.get("status") in ("active", "deactivated"):
        state["active"] = image["status"] == "active"
    if props.get("members") is not None:
        listed = plugin._request("GET", "/%s/members" % plugin.resource_id)
        state["members"] = _as_set(
            props["members"],
            [m["member_id"] for m in listed.get("members") or ()],
        )
    return state


def _as_set(stored, live):
    if stored is not None and sorted(stored) == sorted(live or ()):
        return stored
    return sorted(live or ())
