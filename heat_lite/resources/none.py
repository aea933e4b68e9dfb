"""OS::Heat::None: accepts any properties and does nothing."""

import uuid

from heat_lite.resources import base


class NoneResource(base.Resource):
    """A placeholder: its physical ID is a random UUID, updates are no-ops.

    Used to disable a resource type through the registry and for
    benchmarks: every engine cost is paid, no cloud call is made.
    """

    properties_schema = None
    persist_resource_id_at_once = False
    # Nothing real is made: the engine may run it speculatively, without
    # taking the record's lock first (one transaction per node).
    side_effect_free = True
    # Drift: the state is the record (engine.drift).
    live_state = base.state_in_record

    def handle_create(self):
        self.resource_id_set(str(uuid.uuid4()))

    def handle_update(self, new_props, prop_diff):
        """Nothing to change in the world."""

    def handle_delete(self):
        """Nothing to delete in the world."""
