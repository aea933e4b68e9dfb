"""JSON schemas of the promotions and references bodies, for the OpenAPI
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
    states_enum,
)
from heat_lite.common import states

_STACK_REF = obj(("stack",), additional=False, stack=STRING)
PROMOTION = obj(
    ("id", "status", "source", "target", "parameters", "created_at"),
    id=STRING,
    status=states_enum(states.PROMOTION),
    status_reason=nullable(STRING),
    source=obj(
        ("stack_id", "stack_name", "project", "template_id"),
        stack_id=STRING,
        stack_name=STRING,
        project=STRING,
        template_id=INTEGER,
        template_sha256=STRING,
    ),
    target=obj(
        ("stack_id", "stack_name", "project"),
        stack_id=STRING,
        stack_name=STRING,
        project=STRING,
        created=BOOLEAN,
    ),
    parameters=ANY_OBJECT,
    environment=ANY_OBJECT,
    reset_parameters=STRINGS,
    verify=nullable(ANY_OBJECT),
    rolled_back=BOOLEAN,
    overtaken_by=nullable(STRING),
    created_at=TIME,
    updated_at=TIME,
    finished_at=TIME,
    user=nullable(STRING),
)
_ONE = obj(("promotion",), promotion=PROMOTION)
_PREVIEW_STACK = obj(
    ("stack", "project"),
    stack=STRING,
    id=nullable(STRING),
    project=STRING,
    exists=BOOLEAN,
)
PREVIEW = obj(
    ("preview",),
    preview=obj(
        ("source", "target", "template_changed", "parameters", "dropped"),
        source=_PREVIEW_STACK,
        target=_PREVIEW_STACK,
        template_changed=BOOLEAN,
        parameters=ANY_OBJECT,
        dropped=ANY_OBJECT,
        resources=obj(
            (),
            added=STRINGS,
            deleted=STRINGS,
            replaced=STRINGS,
            updated=STRINGS,
            unchanged=STRINGS,
        ),
        verify=nullable(ANY_OBJECT),
    ),
)
_MANY = obj(("promotions",), promotions=array(PROMOTION))
REFERENCES = obj(
    ("references",),
    references=array(
        obj(
            ("value", "stacks", "current", "retained"),
            value=STRING,
            stacks=INTEGER,
            current=INTEGER,
            retained=INTEGER,
        )
    ),
)
RESPONSES = {
    "create_promotion": (201, _ONE),
    "preview_promotion": (200, PREVIEW),
    "list_promotions": (200, _MANY),
    "show_promotion": (200, _ONE),
    "promotion_action": (200, _ONE),
    "stack_promotions": (200, _MANY),
    "list_references": (200, REFERENCES),
}
_PROMOTION_BODY = obj(
    ("source", "target"),
    additional=False,
    source=_STACK_REF,
    target=obj(("stack",), additional=False, stack=STRING, project=STRING),
    parameters=ANY_OBJECT,
    environment=ANY_OBJECT,
    reset_parameters=STRINGS,
    verify=VERIFY,
)
REQUESTS = {
    "create_promotion": _PROMOTION_BODY,
    "preview_promotion": _PROMOTION_BODY,
    "promotion_action": obj(("rollback",), additional=False, rollback={}),
}
