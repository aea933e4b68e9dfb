"""JSON schemas of the apps' bodies (doc/specs/apps.md), for the OpenAPI
document (merged with ``schemas`` by ``openapi``)."""

from heat_lite.api.schemas import (
    ANY_OBJECT,
    BOOLEAN,
    INTEGER,
    STRING,
    STRINGS,
    TIME,
    VERIFY,
    array,
    nullable,
    obj,
)
from heat_lite.common import states

_SOURCE = obj(
    ("url", "branches"), additional=False, url=STRING, branches=STRINGS
)
_BUILDER = obj(("name",), additional=False, name=STRING, options=ANY_OBJECT)
_STACKS = {"type": "object", "additionalProperties": STRING}
_TEMPLATE = {"oneOf": [ANY_OBJECT, STRING]}
_RETENTION_PROPS = dict(
    keep_last={"type": "integer", "minimum": 0},
    grace={"type": "integer", "minimum": 0},
    mode={"type": "string", "enum": ["report", "hide", "delete"]},
)
_RETENTION = obj(
    ("keep_last", "grace", "mode"), additional=False, **_RETENTION_PROPS
)
APP = obj(
    (
        "id",
        "name",
        "source",
        "builder",
        "image_parameter",
        "stacks",
        "webhook",
        "version",
        "created_at",
    ),
    id=STRING,
    name=STRING,
    project=STRING,
    source=_SOURCE,
    builder=_BUILDER,
    image_parameter=STRING,
    stacks=_STACKS,
    verify=nullable(ANY_OBJECT),
    retention=_RETENTION,
    webhook=BOOLEAN,
    version=INTEGER,
    user=nullable(STRING),
    created_at=TIME,
    updated_at=TIME,
    template=ANY_OBJECT,
    files=_STACKS,
    environment=ANY_OBJECT,
)
_ONE = obj(("app",), app=APP)
_PROPS = dict(
    name=STRING,
    source=_SOURCE,
    builder=_BUILDER,
    template=_TEMPLATE,
    files=_STACKS,
    environment=_TEMPLATE,
    image_parameter=STRING,
    stacks=_STACKS,
    verify=nullable(VERIFY),
    retention=nullable(obj((), additional=False, **_RETENTION_PROPS)),
    webhook_secret=nullable({"type": "string", "minLength": 16}),
)
BUILD = obj(
    (
        "id",
        "app_id",
        "branch",
        "ref",
        "commit",
        "source",
        "status",
        "created_at",
    ),
    id=STRING,
    app_id=STRING,
    app_name=STRING,
    project=STRING,
    branch=STRING,
    ref=STRING,
    commit=STRING,
    source={"type": "string", "enum": ["webhook", "push"]},
    delivery_id=nullable(STRING),
    status={"type": "string", "enum": list(states.BuildStatus)},
    status_reason=nullable(STRING),
    cancel_requested=BOOLEAN,
    builder=nullable(STRING),
    image_id=nullable(STRING),
    template_id=nullable(INTEGER),
    stack_id=nullable(STRING),
    stack_name=nullable(STRING),
    traversal=nullable(STRING),
    verification=nullable(ANY_OBJECT),
    log_tail=STRING,
    created_at=TIME,
    updated_at=TIME,
    started_at=TIME,
    finished_at=TIME,
)
_BUILD = obj(("build",), build=BUILD)
IMAGE = obj(
    ("id", "project", "state", "kept_by", "retention", "created_at"),
    id=STRING,
    name=nullable(STRING),
    project=STRING,
    app_id=nullable(STRING),
    branch=nullable(STRING),
    build_id=nullable(STRING),
    state={"type": "string", "enum": list(states.IMAGE)},
    kept_by=array(ANY_OBJECT),
    retention=_RETENTION,
    created_at=TIME,
    deployed_at=TIME,
    unneeded_at=TIME,
    hidden_at=TIME,
    deleted_at=TIME,
    goes_at=TIME,
    last_error=nullable(STRING),
)
_STEP = obj(
    ("id", "state", "why"),
    id=STRING,
    state=STRING,
    to=nullable(STRING),
    call=nullable(STRING),
    why=STRING,
)
IMAGE_EVENT = obj(
    ("id", "image_id", "action", "created_at"),
    id=INTEGER,
    image_id=STRING,
    app_id=nullable(STRING),
    action={"type": "string", "enum": list(states.IMAGE_EVENTS)},
    reason=nullable(STRING),
    created_at=TIME,
)
_IGNORED = obj(("ignored",), ignored=STRING)
# A project's default retention (/v1/{tenant}/retention): the keys it set,
# the [retention] options, and what an app without its own gets.
_OWN_RETENTION = obj((), additional=False, **_RETENTION_PROPS)
_PROJECT_RETENTION = obj(
    ("retention",),
    retention=obj(
        ("project", "project_default", "options", "effective"),
        project=STRING,
        project_default=_OWN_RETENTION,
        options=_RETENTION,
        effective=_RETENTION,
        updated_at=TIME,
    ),
)
RESPONSES = {
    "webhook": (202, _BUILD),
    "push": (202, _BUILD),
    "list_builds": (200, obj(("builds",), builds=array(BUILD))),
    "show_build": (200, _BUILD),
    "build_log": (
        200,
        obj(("log", "next_offset"), log=STRING, next_offset=INTEGER),
    ),
    "build_action": (200, _BUILD),
    "list_images": (200, obj(("images",), images=array(IMAGE))),
    "show_image": (200, obj(("image",), image=IMAGE)),
    "image_action": (200, obj(("decided",), decided=array(_STEP))),
    "list_app_image_events": (
        200,
        obj(("image_events",), image_events=array(IMAGE_EVENT)),
    ),
    "show_retention": (200, _PROJECT_RETENTION),
    "set_retention": (200, _PROJECT_RETENTION),
    "delete_retention": (204, None),
    "create_app": (201, _ONE),
    "list_apps": (200, obj(("apps",), apps=array(APP))),
    "show_app": (200, _ONE),
    "update_app": (200, _ONE),
    "delete_app": (204, None),
}
# A second success of a handler (openapi): a delivery that is authentic
# but builds nothing (a ping, a branch not followed, a branch deleted).
OTHER_RESPONSES = {
    "webhook": (200, _IGNORED),
    "push": (200, _IGNORED),
    # {"detect_drift": null} starts a detection (202).
    "stack_action": (202, {"type": "object"}),
}
# Refusals beyond openapi's usual ones.
OTHER_ERRORS = {
    "webhook": {415: "Not a git server's content type", 429: "Rate-limited"}
}
REQUESTS = {
    "create_app": obj(
        ("name", "source", "builder", "template", "image_parameter"),
        additional=False,
        **_PROPS,
    ),
    "update_app": dict(obj((), additional=False, **_PROPS), minProperties=1),
    "set_retention": obj(
        ("retention",),
        additional=False,
        retention=dict(_OWN_RETENTION, minProperties=1),
    ),
    "push": obj(
        ("ref", "commit"), additional=False, ref=STRING, commit=STRING
    ),
    "build_action": dict(
        obj((), additional=False, cancel={"nullable": True}),
        minProperties=1,
    ),
    "image_action": dict(
        obj((), additional=False, dry_run={"nullable": True}),
        minProperties=1,
    ),
}
