"""The reading half of the engine endpoint: stacks, their templates,
outputs, resources and events, in Heat's engine format.

Mixed into ``service.EngineService``; nothing here writes.
"""

import json

from heat_lite import conf
from heat_lite.common import exception, states
from heat_lite.common.states import Action, Status
from heat_lite.db import events as db_events
from heat_lite.db import promotions as db_promotions
from heat_lite.db import records as db_records
from heat_lite.db import stacks as db_stacks
from heat_lite.db import templates as db_templates
from heat_lite.engine import definitions
from heat_lite.engine.endpoint import views
from heat_lite.engine.endpoint.base import (
    TARGET,
    bound_template,
    expected,
    find_record,
    find_stack,
    records_by_name,
    required_by,
)
from heat_lite.resources import services as plugin_services

CONF = conf.CONF
# Public filter names of the stack list → stack columns.
_STACK_FILTERS = {
    "id": "id",
    "name": "name",
    "stack_name": "name",
    "action": "action",
    "tenant": "tenant",
    "username": "username",
    "stack_owner": "username",
    "owner_id": "owner_id",
    "parent": "owner_id",
    "stack_status_reason": "status_reason",
    "disable_rollback": "disable_rollback",
    "timeout_mins": "timeout",
    "stack_user_project_id": "tenant",
}
_STATUS_FILTERS = ("status", "stack_status")
RESOURCE_FILTERS = (
    "name",
    "status",
    "action",
    "type",
    "id",
    "physical_resource_id",
)


def _split_status(values, filters):
    """``CREATE_FAILED`` filters action CREATE and status FAILED;
    ``IN_PROGRESS`` (one status, with an underscore of its own) alone or
    after an action."""
    for value in values:
        value = str(value)
        if value.endswith(states.Status.IN_PROGRESS):
            status = str(states.Status.IN_PROGRESS)
            action = value[: -len(status)].rstrip("_")
        else:
            action, _sep, status = value.rpartition("_")
        filters.setdefault("status", []).append(status)
        if action:
            filters.setdefault("action", []).append(action)


def _typed(column, value):
    if column == "disable_rollback":
        if str(value).lower() not in ("true", "false"):
            raise exception.Invalid(
                message='Unrecognized value "%s" for '
                '"disable_rollback", acceptable values '
                "are: true, false." % value
            )
        return str(value).lower() == "true"
    if column == "timeout":
        try:
            return int(value)
        except (TypeError, ValueError):
            raise exception.Invalid(
                message="Invalid timeout_mins %s" % value
            ) from None
    return value


def stack_filters(public):
    """{column: [values]} of the list's public filters (unknown keys are
    ignored, as Heat does)."""
    filters = {}
    for key, values in (public or {}).items():
        values = values if isinstance(values, list) else [values]
        if key in _STATUS_FILTERS:
            _split_status(values, filters)
        elif key in _STACK_FILTERS:
            column = _STACK_FILTERS[key]
            filters.setdefault(column, []).extend(
                _typed(column, v) for v in values
            )
    return filters


class ReadEndpoint:
    """Stack, output, resource and event reads.

    :param services: the plugins' services (``definitions.plugin_for``):
        outputs and attributes resolve through plugins.
    """

    target = TARGET

    def __init__(self, services):
        self.services: plugin_services.Services = services

    @staticmethod
    def _list_args(ctxt, params):
        global_tenant = params.get("global_tenant") and ctxt.is_admin
        return {
            "tenant": None if global_tenant else ctxt.project_id,
            "show_deleted": bool(params.get("show_deleted")),
            "show_nested": bool(params.get("show_nested")),
            "filters": stack_filters(params.get("filters")),
            "tags": params.get("tags"),
            "tags_any": params.get("tags_any"),
            "not_tags": params.get("not_tags"),
            "not_tags_any": params.get("not_tags_any"),
            "hidden_tags": (
                None
                if params.get("show_hidden")
                else list(CONF.hidden_stack_tags) or None
            ),
        }

    @expected
    def list_stacks(self, ctxt, params):
        rows = db_stacks.stack_get_all(
            limit=params.get("limit"),
            marker=params.get("marker"),
            sort_keys=params.get("sort_keys"),
            sort_dir=params.get("sort_dir") or "desc",
            **self._list_args(ctxt, params),
        )
        return [views.stack_summary(r) for r in rows]

    @expected
    def count_stacks(self, ctxt, params):
        return db_stacks.stack_count_all(**self._list_args(ctxt, params))

    @expected
    def show_stack(self, ctxt, stack_identity, resolve_outputs=True):
        stack = find_stack(ctxt, stack_identity)
        bound = bound_template(stack)
        outputs = None
        if resolve_outputs and not (
            stack["action"] == Action.DELETE
            and stack["status"] == Status.COMPLETE
        ):
            # As Heat: ``outputs`` is there (an empty list for a template
            # without any) unless the stack is deleted.
            outputs = []
            if bound.outputs:
                records = records_by_name(stack)
                outputs = [
                    definitions.resolve_output(
                        bound, records, name, self.services
                    )
                    for name in bound.outputs
                ]
        result = views.stack_detail(stack, bound, outputs)
        result["promoted_from"] = views.provenance(
            db_promotions.promotion_current(stack["id"])
        )
        return result

    @expected
    def list_outputs(self, ctxt, stack_identity):
        bound = bound_template(find_stack(ctxt, stack_identity))
        return [
            {"output_key": name, "description": output.description}
            for name, output in bound.outputs.items()
        ]

    @expected
    def show_output(self, ctxt, stack_identity, output_key):
        stack = find_stack(ctxt, stack_identity)
        bound = bound_template(stack)
        if output_key not in bound.outputs:
            raise exception.OutputNotFound(key=output_key)
        return definitions.resolve_output(
            bound, records_by_name(stack), output_key, self.services
        )

    @expected
    def get_template(self, ctxt, stack_identity):
        stack = find_stack(ctxt, stack_identity)
        return db_templates.raw_template_get(stack["raw_template_id"])[
            "template"
        ]

    @expected
    def get_environment(self, ctxt, stack_identity):
        env = bound_template(
            find_stack(ctxt, stack_identity)
        ).environment_display()
        env.pop("parameter_merge_strategies", None)
        return env

    @expected
    def get_files(self, ctxt, stack_identity):
        stack = find_stack(ctxt, stack_identity)
        return db_templates.raw_template_get(stack["raw_template_id"])["files"]

    # Resources -----------------------------------------------------------
    @expected
    def list_stack_resources(
        self,
        ctxt,
        stack_identity,
        nested_depth=0,
        with_detail=False,
        filters=None,
    ):
        """The stack's resources and, down to ``nested_depth`` levels,
        those of its nested stacks (with ``parent_resource``): one query
        per level and one for the records of all of them."""
        stack = find_stack(ctxt, stack_identity)
        depth = min(nested_depth or 0, CONF.max_nested_stack_depth)
        # One level more than listed: the nested links of the last one.
        levels = [(0, stack)] + db_stacks.stack_descendants(
            [stack["id"]], max_depth=depth + 1
        )
        listed = [s for level, s in levels if level <= depth]
        records = db_records.resources_of_stacks(
            [s["id"] for s in listed], roles=states.LISTED_ROLES
        )
        children = {s["id"]: s for level, s in levels if level}
        result = []
        for member in listed:
            result.extend(
                self._resources_of(
                    member,
                    records[member["id"]],
                    children,
                    with_detail,
                    filters or {},
                )
            )
        return result

    def _resources_of(self, stack, records, children, with_detail, filters):
        deps = required_by(stack)
        descriptions = self._descriptions(stack) if with_detail else {}
        result = []
        for record in listed_by_name(records).values():
            if not _matches(record, filters):
                continue
            item = views.resource(
                record, stack, deps.get(record["name"], ()), detail=with_detail
            )
            _nested_links(item, record, stack, children)
            if stack["owner_id"]:
                # Inside a nested stack (listed from the top or directly).
                item["parent_resource"] = stack["parent_resource_name"]
            if with_detail:
                item["description"] = descriptions.get(record["name"], "")
            result.append(item)
        return result

    @staticmethod
    def _descriptions(stack):
        try:
            bound = bound_template(stack)
        except exception.HeatLiteException:
            return {}
        return {n: d.description or "" for n, d in bound.resources.items()}

    @expected
    def describe_stack_resource(
        self, ctxt, stack_identity, resource_name, with_attr=None
    ):
        stack = find_stack(ctxt, stack_identity)
        record = _shown_record(stack, resource_name)
        deps = required_by(stack).get(resource_name, ())
        result = views.resource(record, stack, deps, detail=True)
        _nested_links(
            result, record, stack, {s["id"]: s for s in _tree(stack, 1)[1:]}
        )
        if stack["owner_id"]:
            result["parent_resource"] = stack["parent_resource_name"]
        result["description"] = self._descriptions(stack).get(
            resource_name, ""
        )
        if with_attr:
            plugin = definitions.plugin_for(record, self.services)
            if plugin.needs_caller_token:
                # Live attributes are read as the user asking for them.
                plugin.services = self.services.for_call(ctxt)
            for name in with_attr:
                result["attributes"].setdefault(
                    name, plugin.get_attribute(name)
                )
        return result

    @expected
    def resource_versions(self, ctxt, stack_identity, resource_name):
        stack = find_stack(ctxt, stack_identity)
        versions = db_records.resource_versions(stack["id"], resource_name)
        if not versions:
            raise exception.ResourceNotFound(
                resource_name=resource_name, stack_name=stack["name"]
            )
        return [views.record_version(v) for v in versions]

    # Events --------------------------------------------------------------
    @expected
    def list_events(
        self, ctxt, stack_identity, resource_name=None, params=None
    ):
        params = params or {}
        stack = find_stack(ctxt, stack_identity)
        nested_depth = params.get("nested_depth")
        tree = _tree(
            stack,
            min(nested_depth, CONF.max_nested_stack_depth)
            if nested_depth
            else 0,
        )
        by_id = {s["id"]: s for s in tree}
        rows = db_events.event_get_all(
            list(by_id),
            resource_name=resource_name,
            limit=params.get("limit"),
            marker=params.get("marker"),
            sort_dir=params.get("sort_dir") or "asc",
            sort_keys=params.get("sort_keys"),
            filters=params.get("filters"),
        )
        events = [views.event(r, by_id[r["stack_id"]]) for r in rows]
        if nested_depth is not None:
            # Heat's root_stack link: the stack the list was asked of.
            for event in events:
                event["root_stack_identity"] = views.identity(stack)
        return events

    @expected
    def show_event(self, ctxt, stack_identity, resource_name, event_id):
        stack = find_stack(ctxt, stack_identity)
        row = db_events.event_get(stack["id"], event_id)
        if resource_name is not None and row["resource_name"] != resource_name:
            raise exception.EventNotFound(event_id=event_id)
        return views.event(row, stack)


def listed_by_name(records):
    """{name: the record a resource list shows} of a stack's records with
    the ``LISTED_ROLES``: the newest current one, else (a resource being
    deleted: removed from the template, or the whole stack deleted) its
    newest other version, with its DELETE_* status, as Heat shows it until
    the stack's operation ends. History rows are never passed in."""

    def rank(record):
        return record["role"] == states.Role.CURRENT, record["version"]

    result = {}
    for record in records:
        seen = result.get(record["name"])
        if seen is None or rank(record) > rank(seen):
            result[record["name"]] = record
    return result


def _shown_record(stack, name):
    """The record ``resource show`` describes: the current one, or the
    version being deleted the list shows."""
    try:
        return find_record(stack, name)
    except exception.ResourceNotFound:
        records = [
            r
            for r in db_records.resource_versions(stack["id"], name)
            if r["role"] in states.LISTED_ROLES
        ]
        if not records:
            raise
        return dict(listed_by_name(records)[name], stack_name=stack["name"])


def _tree(stack, depth):
    """[stack] and its live nested stacks down to ``depth`` levels."""
    if not depth:
        return [stack]
    return [stack] + [
        s
        for _level, s in db_stacks.stack_descendants(
            [stack["id"]], max_depth=depth
        )
    ]


def _nested_links(item, record, stack, children):
    """Name the nested stack a resource owns (the API's ``nested``
    link)."""
    child = children.get(record["physical_resource_id"])
    if child is not None and child["owner_id"] == stack["id"]:
        item["nested_identity"] = views.identity(child)


def _matches(record, filters):
    """Whether a record passes the resource list filters (OR within a
    key, AND across keys)."""
    fields = {
        "name": [record["name"]],
        "action": [record["action"]],
        "status": [
            record["status"],
            states.joined(record["action"], record["status"]),
        ],
        "type": [record["type"]],
        "id": [record["uuid"]],
        "physical_resource_id": [record["physical_resource_id"]],
    }
    for key, values in filters.items():
        values = values if isinstance(values, list) else [values]
        if not set(fields[key]) & set(values):
            return False
    return True


def resource_metadata(stack, record, services):
    """Stored metadata, else the template's resolved against the current
    records (``services``: see ``definitions.plugin_for``)."""
    if record.get("rsrc_metadata"):
        return json.loads(record["rsrc_metadata"])
    bound = bound_template(stack)
    defn = bound.resources.get(record["name"])
    if defn is None:
        return {}
    return defn.resolve_metadata(
        definitions.RecordScope(bound, records_by_name(stack), services)
    )
