"""The database functions by the module they were first kept in, for
callers not moved yet to the module that owns each (``db.stacks``,
``db.templates``, ``db.events``, ``db.services``, ``db.records``):
re-exports only, nothing is defined here. New code imports the owning
module.
"""

from heat_lite.db.events import (
    count_events,
    event_create,
    event_get,
    event_get_all,
    event_insert,
    event_last_time,
    event_values,
    events_prebuilt,
)
from heat_lite.db.paging import after as _after
from heat_lite.db.records import (
    resource_set_if_unlocked,
    resources_of_stacks,
)
from heat_lite.db.services import (
    service_claim_dead,
    service_create,
    service_delete,
    service_get,
    service_get_all,
    service_heartbeat,
    service_purge_deleted,
    service_register,
)
from heat_lite.db.session import as_dict as _row
from heat_lite.db.session import is_unavailable
from heat_lite.db.stacks import (
    stack_count,
    stack_count_all,
    stack_create,
    stack_descendants,
    stack_get,
    stack_get_all,
    stack_get_by_name,
    stack_set_state,
    stack_state,
    stack_update_if_traversal,
)
from heat_lite.db.templates import raw_template_get, raw_template_insert

__all__ = [
    "_after",
    "_row",
    "count_events",
    "event_create",
    "event_get",
    "event_get_all",
    "event_insert",
    "event_last_time",
    "event_values",
    "events_prebuilt",
    "is_unavailable",
    "raw_template_get",
    "raw_template_insert",
    "resource_set_if_unlocked",
    "resources_of_stacks",
    "service_claim_dead",
    "service_create",
    "service_delete",
    "service_get",
    "service_get_all",
    "service_heartbeat",
    "service_purge_deleted",
    "service_register",
    "stack_count",
    "stack_count_all",
    "stack_create",
    "stack_descendants",
    "stack_get",
    "stack_get_all",
    "stack_get_by_name",
    "stack_set_state",
    "stack_state",
    "stack_update_if_traversal",
]
