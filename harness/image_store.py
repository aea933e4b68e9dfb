"""An image store of the test process (``[apps] image_store``'s contract,
as ``heat_lite.resources.openstack.image_store.GlanceImageStore``): for
engine tests of builds that do not start the test cloud. It keeps each
image's properties and the bytes it was sent, says ``active`` once they
arrived (or a URL import was asked for), and records every delete.
"""

import itertools
import threading


class MemoryImageStore:
    """Images in a dict: {id: {"name", "properties", "status", "size"}}."""

    name = "memory"

    def __init__(self):
        self.images = {}
        self.deleted = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # Set: uploads wait for it (a test holds a build in UPLOADING).
        self.gate = threading.Event()
        self.gate.set()

    def find(self, on_behalf, name):
        """Every image of the name (the test process sees them all)."""
        with self._lock:
            return sorted(
                i for i, image in self.images.items() if image["name"] == name
            )

    def create(self, on_behalf, name, artifact, properties):
        with self._lock:
            image_id = "img-%d" % next(self._ids)
            self.images[image_id] = {
                "name": name,
                "properties": dict(properties),
                "disk_format": artifact.disk_format,
                "status": "queued",
                "size": None,
            }
        return image_id

    def upload(self, on_behalf, image_id, artifact):
        self.gate.wait()
        size = len(artifact.url or "")
        if artifact.path:
            with open(artifact.path, "rb") as f:
                size = len(f.read())
        with self._lock:
            self.images[image_id].update(status="active", size=size)

    def status(self, on_behalf, image_id):
        with self._lock:
            return self.images[image_id]["status"]

    def delete(self, on_behalf, image_id):
        with self._lock:
            self.images.pop(image_id, None)
            self.deleted.append(image_id)

    def live(self):
        """Ids of the images not deleted."""
        with self._lock:
            return sorted(self.images)
