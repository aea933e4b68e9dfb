"""Which values of a resource property are still in use (``GET
/references?type=OS::Nova::Server&property=image``): what an image
clean-up job asks before it deletes an image.

For each value, how many stacks use it in a *current* record, and how
many only in a record kept for rollback: a ``replaced`` record (kept
until the stack is COMPLETE again), or the stack's last COMPLETE
template while the stack is off it (an update runs or failed: a
rollback would bring that template's value back). A value held only for
rollback is still in use.
"""

import json

from heat_lite.common import exception
from heat_lite.db import references as db_references
from heat_lite.engine import definitions
from heat_lite.engine.endpoint.base import TARGET, expected
from heat_lite.resources import services as plugin_services


def _key(value):
    """The value as the answer shows it (strings as they are)."""
    return value if isinstance(value, str) else json.dumps(value)


def _rollback_values(stack, type_name, prop, services):
    """The values of ``prop`` in the resources of ``type_name`` of the
    stack's last COMPLETE template ([] if it cannot be bound)."""
    try:
        bound = definitions.get(
            stack["prev_raw_template_id"], definitions.stack_info(stack)
        )
        scope = definitions.RecordScope(
            bound, definitions.current_records(stack), services
        )
        found = []
        for defn in bound.resources.values():
            if defn.type == type_name:
                props = defn.resolve_properties(scope) or {}
                if props.get(prop) is not None:
                    found.append(props[prop])
        return found
    except exception.HeatLiteException:
        return []


def count(tenant, type_name, prop, services):
    """[{value, stacks, current, retained}] ordered by stacks (most
    first), then value (``services``: the plugins', for the values a
    rollback template resolves)."""
    counts = db_references.value_counts(tenant, type_name, prop)
    off = db_references.stacks_off_their_rollback_template(tenant)
    for value, (users, kept) in _off_template_counts(
        off, type_name, prop, services
    ).items():
        row = counts.setdefault(value, [0, 0])
        row[0] += users
        row[1] += kept
    rows = [
        {
            "value": value,
            "stacks": users + kept,
            "current": users,
            "retained": kept,
        }
        for value, (users, kept) in counts.items()
    ]
    rows.sort(key=lambda r: (-r["stacks"], r["value"]))
    return rows


def _off_template_counts(stacks, type_name, prop, services):
    """{value: (current, retained only)} of the stacks off their last
    COMPLETE template (the database leaves these to us): their records'
    values, and their rollback template's as retained."""
    current, retained = {}, {}
    records = db_references.property_records(
        [s["id"] for s in stacks], type_name
    )
    for stack_id, role, text in records:
        props = json.loads(text or "{}")
        if props.get(prop) is None:
            continue
        held = current if role == "current" else retained
        held.setdefault(_key(props[prop]), set()).add(stack_id)
    for stack in stacks:
        for value in _rollback_values(stack, type_name, prop, services):
            retained.setdefault(_key(value), set()).add(stack["id"])
    return {
        value: (
            len(current.get(value, ())),
            len(retained.get(value, set()) - current.get(value, set())),
        )
        for value in set(current) | set(retained)
    }


class ReferenceEndpoint:
    """``list_references`` of the [engine] topic.

    :param services: the plugins' services (``definitions.plugin_for``).
    """

    target = TARGET

    def __init__(self, services):
        self.services: plugin_services.Services = services

    @expected
    def list_references(self, ctxt, type_name, prop, all_projects=False):
        """:raises Forbidden: all_projects for a non-admin."""
        if all_projects and not ctxt.is_admin:
            raise exception.Forbidden(action="references:all_projects")
        if not type_name or not prop:
            raise exception.Invalid(message="type and property are required")
        tenant = None if all_projects else ctxt.project_id
        return count(tenant, type_name, prop, self.services)
