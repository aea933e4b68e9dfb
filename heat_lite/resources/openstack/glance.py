"""OS::Glance::WebImage (Heat 27's schema), through Glance's v2 REST API.

Create makes the image record, records its ID, and asks Glance to
import it from ``location`` (the ``web-download`` method); the import
runs in Glance and is polled: ``active`` completes, ``killed`` fails, and
so does a failed import (Glance then lists the stores in
``os_glance_failed_import`` and the image stays queued; Heat would wait
for its timeout). ``active: false`` deactivates the image once
imported. Updates are JSON patches; ``tags``, ``extra_properties``,
``members`` and ``active`` change in place too.
"""

from heat_lite.resources import base, constraints, transient
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, live_glance
from heat_lite.resources.openstack.client import sdk_exc

DISK_FORMATS = [
    "ami",
    "ari",
    "aki",
    "vhd",
    "vhdx",
    "vmdk",
    "raw",
    "qcow2",
    "vdi",
    "iso",
    "ploop",
]
CONTAINER_FORMATS = ["ami", "ari", "aki", "bare", "ovf", "ova", "docker"]
# Template property -> Glance field, for those sent as they are.
FIELDS = (
    "name",
    "id",
    "min_disk",
    "min_ram",
    "protected",
    "disk_format",
    "container_format",
    "tags",
    "architecture",
    "kernel_id",
    "os_distro",
    "os_version",
    "owner",
    "visibility",
    "ramdisk_id",
)
PATCH = "application/openstack-images-v2.1-json-patch"


def _text(description, **kwargs):
    return p.Schema(p.STRING, description, **kwargs)


class WebImage(base.Resource):
    """A Glance image imported from a URL."""

    properties_schema = {
        "name": _text("Name for the image."),
        "id": _text(
            "The image ID. Glance will generate a UUID if not specified."
        ),
        "min_disk": p.Schema(
            p.INTEGER,
            "Amount of disk space (in GB) required to boot image.",
            default=0,
            constraints=[constraints.Range(min=0)],
        ),
        "min_ram": p.Schema(
            p.INTEGER,
            "Amount of ram (in MB) required to boot image.",
            default=0,
            constraints=[constraints.Range(min=0)],
        ),
        "protected": p.Schema(
            p.BOOLEAN,
            "Whether the image can be deleted.",
            default=False,
            update_allowed=True,
        ),
        "disk_format": _text(
            "Disk format of image.",
            required=True,
            constraints=[constraints.AllowedValues(DISK_FORMATS)],
        ),
        "container_format": _text(
            "Container format of image.",
            required=True,
            constraints=[constraints.AllowedValues(CONTAINER_FORMATS)],
        ),
        "location": _text(
            "URL where the data for this image already resides.", required=True
        ),
        "tags": p.Schema(
            p.LIST, "List of image tags.", default=[], update_allowed=True
        ),
        "architecture": _text(
            "Operating system architecture.", update_allowed=True
        ),
        "kernel_id": _text(
            "ID of image stored in Glance that should be used as the kernel.",
            update_allowed=True,
        ),
        "os_distro": _text(
            "The common name of the operating system "
            "distribution in lowercase.",
            update_allowed=True,
        ),
        "os_version": _text(
            "Operating system version as specified by the distributor.",
            update_allowed=True,
        ),
        "owner": _text("Owner of the image.", update_allowed=True),
        "extra_properties": p.Schema(
            p.MAP,
            "Arbitrary properties to associate with the image.",
            default={},
            update_allowed=True,
        ),
        "visibility": _text(
            "Scope of image accessibility.",
            default="private",
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(
                    ["public", "private", "community", "shared"]
                )
            ],
        ),
        "ramdisk_id": _text(
            "ID of image stored in Glance that should be used as the ramdisk.",
            update_allowed=True,
        ),
        "active": p.Schema(
            p.BOOLEAN,
            "The image is active or not.",
            default=True,
            update_allowed=True,
        ),
        "members": p.Schema(
            p.LIST,
            "List of additional owners of the image (projects).",
            update_allowed=True,
            schema=p.Schema(p.STRING),
        ),
    }
    attributes_schema = {}

    @property
    def default_poll_interval(self):
        return client.CONF.openstack.poll_interval

    def _request(self, method, path, body=None, **kwargs):
        response = client.connection(self).image.request(
            "/images" + path, method, json=body, **kwargs
        )
        sdk_exc.raise_from_response(response)
        return response.json() if response.content else {}

    def _image(self):
        return self._request("GET", "/" + self.resource_id)

    def handle_create(self):
        props = self.properties
        body = {k: props[k] for k in FIELDS if props.get(k) is not None}
        body.setdefault("name", self.physical_resource_name())
        body.update(
            {
                k: str(v)
                for k, v in (props.get("extra_properties") or {}).items()
            }
        )
        made = self._request("POST", "", body)
        self.resource_id_set(made["id"])
        self._request(
            "POST",
            "/%s/import" % made["id"],
            {"method": {"name": "web-download", "uri": props["location"]}},
        )
        for member in props.get("members") or ():
            self._request(
                "POST", "/%s/members" % made["id"], {"member": member}
            )
        return props["active"]

    @transient.polled
    def check_create_complete(self, active):
        image = self._image()
        status = image["status"]
        if status == "killed" or image.get("os_glance_failed_import"):
            raise client.ResourceInError(
                resource_status=status,
                status_reason="import from %s failed"
                % self.properties["location"],
            )
        if status == "active" and not active:
            self._action("deactivate")
            return True
        return status in ("active", "deactivated") and (
            status == "active"
        ) == bool(active)

    def _action(self, verb):
        self._request("POST", "/%s/actions/%s" % (self.resource_id, verb))

    def handle_update(self, new_props, prop_diff):
        ops = _patch_ops(self.properties, new_props, prop_diff)
        if ops:
            self._request(
                "PATCH",
                "/" + self.resource_id,
                ops,
                headers={"Content-Type": PATCH},
            )
        if "members" in prop_diff:
            self._members(
                self.properties.get("members"), new_props.get("members")
            )
        if "active" in prop_diff:
            self._action("reactivate" if new_props["active"] else "deactivate")
        self.properties = new_props

    def _members(self, old, new):
        old, new = set(old or ()), set(new or ())
        for member in new - old:
            self._request(
                "POST", "/%s/members" % self.resource_id, {"member": member}
            )
        for member in old - new:
            self._request(
                "DELETE", "/%s/members/%s" % (self.resource_id, member)
            )

    def handle_delete(self):
        if not self.resource_id:
            return
        try:
            self._request("DELETE", "/" + self.resource_id)
        except sdk_exc.NotFoundException:
            pass

    def live_state(self):
        """Drift detection's view (``live_glance``)."""
        return live_glance.image_state(self)

    def live_expectations(self, action):
        """Whether the image is active is the plugin's to keep, set in
        the template or not (``active`` defaults to true)."""
        return {"active": bool(self.properties.get("active", True))}

    def _show_resource(self):
        if not self.resource_id:
            return None
        try:
            return self._image()
        except sdk_exc.NotFoundException:
            return None


def _patch_ops(old_props, new_props, prop_diff):
    """The JSON patch for the changed Glance fields of ``prop_diff``."""
    ops = []
    for key in sorted(set(prop_diff) & set(FIELDS) - {"tags"}):
        if new_props.get(key) is None:
            ops.append({"op": "remove", "path": "/" + key})
        else:
            ops.append(
                {"op": "replace", "path": "/" + key, "value": new_props[key]}
            )
    if "tags" in prop_diff:
        ops.append(
            {
                "op": "replace",
                "path": "/tags",
                "value": list(new_props.get("tags") or []),
            }
        )
    if "extra_properties" in prop_diff:
        ops.extend(
            _extra_ops(
                old_props.get("extra_properties"),
                new_props.get("extra_properties"),
            )
        )
    return ops


def _extra_ops(old, new):
    old, new = old or {}, new or {}
    ops = [
        {"op": "remove", "path": "/" + k} for k in sorted(set(old) - set(new))
    ]
    for key in sorted(new):
        if key not in old:
            ops.append(
                {"op": "add", "path": "/" + key, "value": str(new[key])}
            )
        elif old[key] != new[key]:
            ops.append(
                {"op": "replace", "path": "/" + key, "value": str(new[key])}
            )
    return ops
