"""Nova's fake virt driver, with snapshots that end in an active image.

nova-compute of the test cloud loads it as ``minicloud_nova.FakeDriver``
(``compute_driver``; see ``sitecustomize`` beside it). Nova's own fake
driver answers a snapshot without uploading anything, so the image Nova
made for it stays ``queued`` in Glance and whatever waits for it (a
stack snapshot, as Heat's does) waits forever. Here the snapshot uploads
a small raw disk, as a real driver uploads the guest's, and Glance makes
the image ``active``.
"""

import io

from nova.image import glance
from nova.virt import fake

DISK = b"\0" * 4096


class FakeDriver(fake.FakeDriver):
    def snapshot(self, context, instance, image_id, update_task_state):
        super().snapshot(context, instance, image_id, update_task_state)
        glance.API().update(
            context,
            image_id,
            {"disk_format": "raw", "container_format": "bare"},
            data=io.BytesIO(DISK),
            purge_props=False,
        )
