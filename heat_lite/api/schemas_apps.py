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
RESPONSES = {
    "create_app": (201, _ONE),
    "list_apps": (200, obj(("apps",), apps=array(APP))),
    "show_app": (200, _ONE),
    "update_app": (200, _ONE),
    "delete_app": (204, None),
}
REQUESTS = {
    "create_app": obj(
        ("name", "source", "builder", "template", "image_parameter"),
        additional=False,
        **_PROPS,
    ),
    "update_app": dict(obj((), additional=False, **_PROPS), minProperties=1),
}
