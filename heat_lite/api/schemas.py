"""JSON schemas of the v1 API's bodies, for the OpenAPI document.

Response schemas say what clients may rely on (types of every field
python-heatclient reads, which fields are always there); extra fields are
allowed. Request schemas say what is accepted; the handlers check the
same shapes and answer 400 otherwise.
"""

from heat_lite.common import states


def obj(required=(), additional=True, **props):
    schema = {
        "type": "object",
        "properties": props,
        "additionalProperties": additional,
    }
    if required:
        schema["required"] = list(required)
    return schema


def array(items):
    return {"type": "array", "items": items}


def nullable(schema):
    return dict(schema, nullable=True)


def states_enum(vocabulary):
    """A status of ``vocabulary`` (a ``common.states.Vocabulary``)."""
    return {"type": "string", "enum": [str(s) for s in vocabulary]}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
# heat_lite's own stack field: what an update does while another runs.
UPDATE_SEMANTICS = {"type": "string", "enum": list(states.UPDATE_SEMANTICS)}
ANY_OBJECT = {"type": "object", "additionalProperties": True}
TIME = nullable(STRING)
STRINGS = array(STRING)
LINK = obj(("href", "rel"), href=STRING, rel=STRING)
LINKS = array(LINK)
IDENTITY = obj(
    ("tenant", "stack_name", "stack_id", "path"),
    tenant=STRING,
    stack_name=STRING,
    stack_id=STRING,
    path=STRING,
)

# Query parameters (what ``request.query`` declares).
Q_BOOL = {"type": "string", "enum": ["true", "false", "True", "False"]}
Q_INT = {"type": "integer", "minimum": 0}
Q_SORT_DIR = {"type": "string", "enum": ["asc", "desc"]}
Q_PAGE = {"limit": Q_INT, "marker": STRING}

ERROR = obj(
    ("code", "title", "explanation", "error"),
    code=INTEGER,
    title=STRING,
    explanation=STRING,
    error=obj(
        ("type", "message"),
        type=STRING,
        message=STRING,
        traceback=nullable(STRING),
    ),
)

_STACK_COMMON = dict(
    id=STRING,
    links=LINKS,
    stack_name=STRING,
    description=STRING,
    stack_status=STRING,
    stack_status_reason=STRING,
    creation_time=TIME,
    updated_time=TIME,
    deletion_time=TIME,
    stack_owner=nullable(STRING),
    parent=nullable(STRING),
    stack_user_project_id=nullable(STRING),
    tags=nullable(STRINGS),
    project=STRING,
)
STACK_SUMMARY = obj(
    ("id", "links", "stack_name", "stack_status", "creation_time"),
    **_STACK_COMMON,
)
OUTPUT = obj(
    ("output_key",),
    output_key=STRING,
    description=nullable(STRING),
    output_value={},
    output_error=STRING,
)
STACK = obj(
    (
        "id",
        "links",
        "stack_name",
        "stack_status",
        "parameters",
        "disable_rollback",
    ),
    template_description=STRING,
    parameters={"type": "object", "additionalProperties": STRING},
    outputs=array(OUTPUT),
    disable_rollback=BOOLEAN,
    timeout_mins=nullable(INTEGER),
    capabilities=array({}),
    notification_topics=array({}),
    update_semantics=UPDATE_SEMANTICS,
    **_STACK_COMMON,
)
STACK_LIST = obj(
    ("stacks",), stacks=array(STACK_SUMMARY), links=LINKS, count=INTEGER
)
STACK_CREATED = obj(
    ("stack",), stack=obj(("id", "links"), id=STRING, links=LINKS)
)

ENGINE_RESOURCE = obj(
    ("resource_name", "resource_action", "resource_status", "resource_type"),
    resource_name=STRING,
    resource_action=STRING,
    resource_status=STRING,
    resource_status_reason=STRING,
    resource_type=STRING,
    physical_resource_id=STRING,
    resource_identity=IDENTITY,
    stack_identity=IDENTITY,
    required_by=STRINGS,
    properties=ANY_OBJECT,
    metadata=ANY_OBJECT,
)
STACK_PREVIEW = obj(
    ("stack",),
    stack=obj(
        ("stack_name", "resources"),
        stack_name=STRING,
        parameters=ANY_OBJECT,
        resources=array({}),
    ),
)
DRIFT_PROPERTY = obj(
    ("name", "expected", "actual", "action"),
    name=STRING,
    expected={},
    actual={},
    action={"enum": ["revert", "update", "keep"]},
)
# A resource's drift in an update preview (``engine.drift.revert``).
RESOURCE_DRIFT = obj(
    ("status",),
    status={"enum": ["MODIFIED", "DELETED"]},
    properties=array(DRIFT_PROPERTY),
    action={"enum": ["recreate", "keep"]},
    reason=STRING,
)
CHANGES = obj(
    ("resource_changes",),
    # heat_lite's own: the drift report the preview was computed against.
    drift=obj(
        ("state", "detected_at", "message", "revert_drift"),
        state={"enum": ["CURRENT", "STALE", "NOT_DETECTED"]},
        detected_at=TIME,
        message=STRING,
        revert_drift=BOOLEAN,
    ),
    resource_changes=obj(
        ("added", "deleted", "replaced", "unchanged", "updated"),
        **{
            k: array(
                dict(
                    ENGINE_RESOURCE,
                    properties=dict(
                        ENGINE_RESOURCE["properties"], drift=RESOURCE_DRIFT
                    ),
                )
            )
            for k in ("added", "deleted", "replaced", "unchanged", "updated")
        },
    ),
)

RESOURCE = obj(
    (
        "resource_name",
        "logical_resource_id",
        "physical_resource_id",
        "resource_type",
        "resource_status",
        "links",
        "required_by",
    ),
    resource_name=STRING,
    logical_resource_id=STRING,
    physical_resource_id=STRING,
    resource_type=STRING,
    resource_status=STRING,
    resource_status_reason=STRING,
    creation_time=TIME,
    updated_time=TIME,
    required_by=STRINGS,
    links=LINKS,
    description=STRING,
    attributes=ANY_OBJECT,
    parent_resource=STRING,
)
EVENT = obj(
    ("id", "links", "event_time", "resource_name", "resource_status"),
    id=STRING,
    links=LINKS,
    event_time=STRING,
    resource_name=STRING,
    logical_resource_id=STRING,
    physical_resource_id=STRING,
    resource_status=STRING,
    resource_status_reason=STRING,
    resource_type=STRING,
    resource_properties=ANY_OBJECT,
)
ABANDON_RESOURCE = obj(
    (
        "name",
        "type",
        "action",
        "status",
        "resource_id",
        "resource_data",
        "metadata",
    ),
    name=STRING,
    type=STRING,
    action=STRING,
    status=STRING,
    resource_id=nullable(STRING),
    resource_data=ANY_OBJECT,
    metadata=ANY_OBJECT,
    # A resource owning a nested stack: that stack's resources, alike.
    resources={"type": "object", "additionalProperties": ANY_OBJECT},
)
ABANDON_DATA = obj(
    (
        "name",
        "id",
        "action",
        "status",
        "template",
        "environment",
        "files",
        "resources",
        "project_id",
    ),
    name=STRING,
    id=STRING,
    action=STRING,
    status=STRING,
    template=ANY_OBJECT,
    environment=ANY_OBJECT,
    files={"type": "object", "additionalProperties": STRING},
    resources={"type": "object", "additionalProperties": ABANDON_RESOURCE},
    project_id=STRING,
    stack_user_project_id=nullable(STRING),
    tags=nullable(STRINGS),
)
SERVICE = obj(
    ("id", "host", "binary", "topic", "status"),
    id=STRING,
    engine_id=STRING,
    host=STRING,
    hostname=STRING,
    binary=STRING,
    topic=STRING,
    status=STRING,
    report_interval={"type": "number"},
    created_at=TIME,
    updated_at=TIME,
    deleted_at=TIME,
)
_CONFIG_COMMON = dict(
    id=STRING, name=nullable(STRING), group=STRING, creation_time=STRING
)
SOFTWARE_CONFIG_SUMMARY = obj(
    ("id", "name", "group", "creation_time"), **_CONFIG_COMMON
)
SOFTWARE_CONFIG = obj(
    (
        "id",
        "name",
        "group",
        "config",
        "inputs",
        "outputs",
        "options",
        "creation_time",
    ),
    # A map for an OS::Heat::StructuredConfig.
    config=nullable({"oneOf": [STRING, ANY_OBJECT]}),
    inputs=array(ANY_OBJECT),
    outputs=array(ANY_OBJECT),
    options=ANY_OBJECT,
    project=STRING,
    **_CONFIG_COMMON,
)

SOFTWARE_DEPLOYMENT = obj(
    (
        "id",
        "server_id",
        "config_id",
        "input_values",
        "output_values",
        "action",
        "status",
        "status_reason",
        "creation_time",
    ),
    id=STRING,
    server_id=STRING,
    config_id=STRING,
    input_values=nullable(ANY_OBJECT),
    output_values=nullable(ANY_OBJECT),
    action=nullable(STRING),
    status=nullable(STRING),
    status_reason=nullable(STRING),
    creation_time=STRING,
    updated_time=STRING,
)
_DEPLOYMENT = obj(
    ("software_deployment",), software_deployment=SOFTWARE_DEPLOYMENT
)

SNAPSHOT = obj(
    ("id", "name", "status", "status_reason", "data", "creation_time"),
    id=STRING,
    name=nullable(STRING),
    stack_id=STRING,
    action={"type": "string", "enum": ["SNAPSHOT"]},
    status=states_enum(states.SNAPSHOT),
    status_reason=nullable(STRING),
    data=nullable(ANY_OBJECT),
    creation_time=STRING,
)

# A stack's traversals (engine.endpoint.traversals, GET .../traversals).
TRAVERSAL = obj(
    ("id", "action", "state", "created_at"),
    id=STRING,
    action=STRING,
    state=states_enum(states.TRAVERSAL),
    status_reason=nullable(STRING),
    requested_by=nullable(STRING),
    superseded_by=nullable(STRING),
    created_at=STRING,
    started_at=nullable(STRING),
    finished_at=nullable(STRING),
)

# A stack's saved plan (engine.endpoint.plans, .../plans): the list shows
# the summary, show/create/apply the preview too (``resource_changes``, as
# a preview's answer has it).
_PLAN_SUMMARY = dict(
    id=STRING,
    stack_id=STRING,
    stack_name=STRING,
    status=states_enum(states.PLAN),
    status_reason=nullable(STRING),
    existing=BOOLEAN,
    traversal=nullable(STRING),
    created_by=nullable(STRING),
    created_at=STRING,
    expires_at=STRING,
    applied_at=nullable(STRING),
    applied_traversal=nullable(STRING),
)
PLAN_SUMMARY = obj(tuple(_PLAN_SUMMARY), **_PLAN_SUMMARY)
PLAN = obj(
    tuple(_PLAN_SUMMARY),
    resource_changes=CHANGES["properties"]["resource_changes"],
    drift=nullable(CHANGES["properties"]["drift"]),
    template=nullable(ANY_OBJECT),
    basis=obj(
        ("stacks", "records", "drift_reports"),
        stacks={"type": "object", "additionalProperties": nullable(STRING)},
        records=INTEGER,
        drift_reports=INTEGER,
    ),
    **_PLAN_SUMMARY,
)

# Successful answers, by handler name: (status, schema or None).
# A stack's last drift detection (engine.drift.endpoint.show_drift).
DRIFT_RESOURCE = obj(
    ("resource_name", "resource_type", "drift_status"),
    resource_name=STRING,
    resource_type=STRING,
    physical_resource_id=nullable(STRING),
    parent_resource=nullable(STRING),
    drift_status={
        "type": "string",
        "enum": ["IN_SYNC", "MODIFIED", "DELETED", "NOT_CHECKED"],
    },
    reason=STRING,
    properties=array(obj(("name", "expected", "actual"), name=STRING)),
)
DRIFT = obj(
    ("stack_id", "drift_status", "resources"),
    stack_id=STRING,
    stack_name=STRING,
    drift_status={
        "type": "string",
        "enum": [
            "IN_SYNC",
            "DRIFTED",
            "DETECTION_IN_PROGRESS",
            "DETECTION_FAILED",
        ],
    },
    drift_status_reason=nullable(STRING),
    detection_started_at=TIME,
    detected_at=TIME,
    counts={"type": "object", "additionalProperties": INTEGER},
    resources=array(DRIFT_RESOURCE),
)

RESPONSES = {
    "list_stacks": (200, STACK_LIST),
    "list_stacks_detail": (200, STACK_LIST),
    "create_stack": (201, STACK_CREATED),
    "preview_stack": (200, STACK_PREVIEW),
    "lookup": (302, None),
    "lookup_arn": (302, None),
    "show_stack": (200, obj(("stack",), stack=STACK)),
    "update_stack": (202, None),
    "patch_stack": (202, None),
    "preview_update": (200, CHANGES),
    "preview_update_patch": (200, CHANGES),
    "delete_stack": (204, None),
    "abandon_stack": (200, ABANDON_DATA),
    "export_stack": (200, ABANDON_DATA),
    "get_template": (200, ANY_OBJECT),
    "get_environment": (200, ANY_OBJECT),
    "get_files": (200, {"type": "object", "additionalProperties": STRING}),
    "list_outputs": (200, obj(("outputs",), outputs=array(OUTPUT))),
    "show_output": (200, obj(("output",), output=OUTPUT)),
    "stack_action": (200, None),
    "show_drift": (200, obj(("drift",), drift=DRIFT)),
    "list_traversals": (
        200,
        obj(("traversals",), traversals=array(TRAVERSAL)),
    ),
    "cancel_traversal": (200, obj(("traversal",), traversal=TRAVERSAL)),
    "create_plan": (201, obj(("plan",), plan=PLAN)),
    "list_plans": (200, obj(("plans",), plans=array(PLAN_SUMMARY))),
    "show_plan": (200, obj(("plan",), plan=PLAN)),
    "apply_plan": (202, obj(("plan",), plan=PLAN_SUMMARY)),
    "delete_plan": (204, None),
    "snapshot_create": (200, SNAPSHOT),
    "snapshot_list": (200, obj(("snapshots",), snapshots=array(SNAPSHOT))),
    "snapshot_show": (200, obj(("snapshot",), snapshot=SNAPSHOT)),
    "snapshot_delete": (204, None),
    "snapshot_restore": (202, None),
    "list_resources": (200, obj(("resources",), resources=array(RESOURCE))),
    "show_resource": (200, obj(("resource",), resource=RESOURCE)),
    "mark_unhealthy": (200, None),
    "metadata": (200, obj(("metadata",), metadata={})),
    "signal": (200, None),
    "resource_versions": (200, obj(("versions",), versions=array(ANY_OBJECT))),
    "list_resource_events": (200, obj(("events",), events=array(EVENT))),
    "list_events": (200, obj(("events",), events=array(EVENT))),
    "show_event": (200, obj(("event",), event=EVENT)),
    "validate": (200, ANY_OBJECT),
    "list_versions": (
        200,
        obj(
            ("template_versions",),
            template_versions=array(
                obj(
                    ("version", "type"),
                    version=STRING,
                    type=STRING,
                    aliases=STRINGS,
                )
            ),
        ),
    ),
    "list_functions": (
        200,
        obj(
            ("template_functions",),
            template_functions=array(
                obj(
                    ("functions", "description"),
                    functions=STRING,
                    description=STRING,
                )
            ),
        ),
    ),
    "list_resource_types": (
        200,
        obj(("resource_types",), resource_types=array({})),
    ),
    "resource_schema": (
        200,
        obj(
            ("resource_type", "properties", "attributes"),
            resource_type=STRING,
            properties=ANY_OBJECT,
            attributes=ANY_OBJECT,
            support_status=ANY_OBJECT,
        ),
    ),
    "generate_template": (200, ANY_OBJECT),
    "build_info": (
        200,
        obj(
            ("api", "engine"),
            api=obj(("revision",), revision=STRING),
            engine=obj(("revision",), revision=STRING),
        ),
    ),
    "list_services": (200, obj(("services",), services=array(SERVICE))),
    "list_software_configs": (
        200,
        obj(
            ("software_configs",),
            software_configs=array(SOFTWARE_CONFIG_SUMMARY),
        ),
    ),
    "create_software_config": (
        200,
        obj(("software_config",), software_config=SOFTWARE_CONFIG),
    ),
    "show_software_config": (
        200,
        obj(("software_config",), software_config=SOFTWARE_CONFIG),
    ),
    "delete_software_config": (204, None),
    "list_software_deployments": (
        200,
        obj(
            ("software_deployments",),
            software_deployments=array(SOFTWARE_DEPLOYMENT),
        ),
    ),
    "create_software_deployment": (200, _DEPLOYMENT),
    "show_software_deployment": (200, _DEPLOYMENT),
    "update_software_deployment": (200, _DEPLOYMENT),
    "delete_software_deployment": (204, None),
    "metadata_software_deployments": (
        200,
        obj(("metadata",), metadata=array(SOFTWARE_CONFIG)),
    ),
    "verdict": (200, None),
    "query_stacks": (
        200,
        obj(
            ("stacks",),
            stacks=array(
                obj(
                    ("id", "stack_name", "stack_status", "matched"),
                    id=STRING,
                    stack_name=STRING,
                    stack_status=STRING,
                    project=STRING,
                    matched=ANY_OBJECT,
                )
            ),
        ),
    ),
}

_ROLLOUT_SUMMARY = dict(
    id=STRING,
    name=STRING,
    status=states_enum(states.ROLLOUT),
    status_reason=nullable(STRING),
    strategy=ANY_OBJECT,
    created_at=TIME,
    updated_at=TIME,
    counts={"type": "object", "additionalProperties": INTEGER},
)
ROLLOUT_SUMMARY = obj(tuple(_ROLLOUT_SUMMARY), **_ROLLOUT_SUMMARY)
ROLLOUT_TARGET = obj(
    ("stack_id", "stack_name", "batch", "status"),
    stack_id=STRING,
    stack_name=STRING,
    batch=INTEGER,
    status=states_enum(states.ROLLOUT_TARGET),
    status_reason=nullable(STRING),
    started_at=TIME,
    finished_at=TIME,
)
ROLLOUT = obj(
    tuple(_ROLLOUT_SUMMARY) + ("targets",),
    targets=array(ROLLOUT_TARGET),
    **_ROLLOUT_SUMMARY,
)
RESPONSES.update(
    create_rollout=(201, obj(("rollout",), rollout=ROLLOUT)),
    list_rollouts=(200, obj(("rollouts",), rollouts=array(ROLLOUT_SUMMARY))),
    show_rollout=(200, obj(("rollout",), rollout=ROLLOUT)),
    delete_rollout=(204, None),
    rollout_action=(200, obj(("rollout",), rollout=ROLLOUT)),
)

_TEMPLATE = {"oneOf": [ANY_OBJECT, STRING]}
_SOURCES = dict(
    template=_TEMPLATE,
    template_url=STRING,
    parameters=ANY_OBJECT,
    environment={"oneOf": [ANY_OBJECT, STRING]},
    environment_files=STRINGS,
    files={"type": "object", "additionalProperties": STRING},
    files_container=STRING,
)
VERIFY = obj(
    ("checks",),
    additional=False,
    timeout={"type": "integer", "minimum": 1, "maximum": 604800},
    checks=dict(
        array(
            {
                "oneOf": [
                    obj(
                        ("type", "output", "equals"),
                        additional=False,
                        type={"type": "string", "enum": ["output"]},
                        output={"type": "string", "minLength": 1},
                        equals={},
                    ),
                    obj(
                        ("type",),
                        additional=False,
                        type={"type": "string", "enum": ["signal"]},
                    ),
                ]
            }
        ),
        minItems=1,
        maxItems=20,
    ),
)
_GLOB = STRING
SELECTOR = obj(
    additional=False,
    stack_name=_GLOB,
    tags=STRINGS,
    parameters={"type": "object", "additionalProperties": _GLOB},
    resources=array(
        obj(
            additional=False,
            type=_GLOB,
            name=_GLOB,
            properties={"type": "object", "additionalProperties": {}},
        )
    ),
    status=STRINGS,
)
_OPTIONS = dict(
    verify=VERIFY,
    timeout_mins={"type": "integer", "minimum": 0},
    # What ``openstack stack adopt --timeout`` sends; timeout_mins wins.
    timeout=nullable({"type": "integer", "minimum": 0}),
    disable_rollback=BOOLEAN,
    tags={"oneOf": [STRING, STRINGS]},
    update_semantics=UPDATE_SEMANTICS,
)
CREATE_BODY = obj(
    ("stack_name",),
    additional=False,
    stack_name={"type": "string", "minLength": 1},
    adopt_stack_data={"oneOf": [STRING, ANY_OBJECT]},
    **_SOURCES,
    **_OPTIONS,
)
UPDATE_BODY = obj(
    additional=False,
    clear_parameters=STRINGS,
    converge=BOOLEAN,
    # heat_lite's own: converge the live state back onto the template.
    revert_drift=BOOLEAN,
    existing=BOOLEAN,
    stack_name=STRING,
    adopt_stack_data=STRING,
    **_SOURCES,
    **_OPTIONS,
)
# Request bodies, by handler name.
REQUESTS = {
    "create_stack": CREATE_BODY,
    "preview_stack": CREATE_BODY,
    "update_stack": UPDATE_BODY,
    "patch_stack": UPDATE_BODY,
    "preview_update": UPDATE_BODY,
    "preview_update_patch": UPDATE_BODY,
    "create_plan": UPDATE_BODY,
    "validate": obj(**_SOURCES),
    "stack_action": dict(
        obj(
            additional=False,
            **{
                a: {}
                for a in (
                    "suspend",
                    "resume",
                    "check",
                    "cancel_update",
                    "cancel_without_rollback",
                    "detect_drift",
                )
            },
            update_semantics=UPDATE_SEMANTICS,
        ),
        minProperties=1,
        maxProperties=1,
    ),
    "mark_unhealthy": obj(
        ("mark_unhealthy",),
        additional=False,
        mark_unhealthy=BOOLEAN,
        resource_status_reason=STRING,
    ),
    "signal": {},
    "snapshot_create": obj(additional=False, name=nullable(STRING)),
    "verdict": obj(
        ("status",),
        additional=False,
        status={"type": "string", "enum": ["PASS", "FAIL"]},
        reason=STRING,
    ),
    "query_stacks": obj(
        ("selector",),
        additional=False,
        selector=SELECTOR,
        all_projects=BOOLEAN,
    ),
    "create_rollout": obj(
        ("name", "selector", "update", "verify"),
        additional=False,
        name={"type": "string", "minLength": 1, "maxLength": 255},
        selector=SELECTOR,
        update=obj(
            additional=False,
            parameters=ANY_OBJECT,
            template=_TEMPLATE,
            files={"type": "object", "additionalProperties": STRING},
            environment={"oneOf": [ANY_OBJECT, STRING]},
            clear_parameters=STRINGS,
        ),
        verify=VERIFY,
        strategy=obj(
            additional=False,
            canary={"type": "integer", "minimum": 0},
            batch_size={"type": "integer", "minimum": 1},
            max_failures={"type": "integer", "minimum": 0},
        ),
    ),
    "rollout_action": dict(
        obj(
            additional=False,
            **{a: {} for a in ("pause", "resume", "cancel", "rollback")},
        ),
        minProperties=1,
        maxProperties=1,
    ),
    "create_software_deployment": obj(
        ("config_id", "server_id"),
        config_id=STRING,
        server_id=STRING,
        input_values=nullable(ANY_OBJECT),
        action=nullable(STRING),
        status=nullable(STRING),
        status_reason=nullable(STRING),
        stack_user_project_id=nullable(STRING),
    ),
    "update_software_deployment": obj(
        config_id=nullable(STRING),
        input_values=nullable(ANY_OBJECT),
        output_values=nullable(ANY_OBJECT),
        action=nullable(STRING),
        status=nullable(STRING),
        status_reason=nullable(STRING),
    ),
    "create_software_config": obj(
        name=nullable(STRING),
        group=nullable(STRING),
        config=nullable(STRING),
        inputs=array(ANY_OBJECT),
        outputs=array(ANY_OBJECT),
        options=ANY_OBJECT,
    ),
}
