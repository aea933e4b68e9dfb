"""The change marks a polling page asks for (``stack_changes``,
``project_changes``): each moves when what its part of the page shows
changes, and only then; neither says anything across projects."""

import threading
import uuid

import sqlalchemy as sa

from heat_lite.common import context, exception
from heat_lite.db import models
from heat_lite.db import promotions as db_promotions
from heat_lite.db import session as db_session
from heat_lite.engine.endpoint import changes, resources, service
from heat_lite.engine.endpoint import reads as reads_mod
from tests.unit.engine.test_rollouts import _raises, _stack_status, _wait

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"v": {"type": "string", "default": "one"}},
    "resources": {
        "app": {
            "type": "OS::Heat::TestResource",
            "properties": {
                "value": {"get_param": "v"},
                "update_replace": True,
            },
        },
        "front": {"type": "OS::Heat::None", "depends_on": "app"},
    },
}


def _ctxt(prefix):
    return context.RequestContext(
        project_id=prefix + uuid.uuid4().hex[:8], user_id="u", overwrite=False
    )


def test_marks_move_with_their_part_only(engine):
    ctxt, other = _ctxt("c"), _ctxt("o")
    ends = changes.ChangesEndpoint()
    svc = service.EngineService(engine.ops, engine.services)
    other_before = ends.project_changes(other)
    empty = ends.project_changes(ctxt)
    ident = svc.create_stack(ctxt, "watched", TEMPLATE, {}, {}, None, None, {})
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    created = ends.stack_changes(ctxt, ident)
    assert created["stack_status"] == "CREATE_COMPLETE"
    # Nothing moved: the same marks, read again.
    assert ends.stack_changes(ctxt, ident) == created
    listed = ends.project_changes(ctxt)
    assert listed != empty and listed == ends.project_changes(ctxt)
    # Another project: no such stack, and its own mark did not move.
    with _raises(exception.StackNotFound):
        ends.stack_changes(other, ident)
    with _raises(exception.StackNotFound):
        ends.stack_changes(ctxt, dict(ident, stack_name="not-its-name"))
    assert ends.project_changes(other) == other_before

    # A record written (and its event), the stack row untouched.
    resources.ResourceEndpoint(engine.services).resource_mark_unhealthy(
        ctxt, ident, "front", True, "broken"
    )
    marked = ends.stack_changes(ctxt, ident)
    assert marked["resources"] != created["resources"]
    assert marked["events"] != created["events"]
    assert marked["stack"] != created["stack"]  # outputs come from records
    assert marked["stack_status"] == "CREATE_COMPLETE"
    assert ends.project_changes(ctxt) == listed

    # An update that replaces a record: every mark moves, the list's too.
    svc.update_stack(
        ctxt, ident, None, {"v": "two"}, {}, None, None, {}, existing=True
    )
    _wait(lambda: _stack_status(ident["stack_id"]) == "UPDATE_COMPLETE")
    updated = ends.stack_changes(ctxt, ident)
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    for part in ("stack", "resources", "events"):
        assert updated[part] != marked[part], part
    assert ends.project_changes(ctxt) != listed
    assert ends.project_changes(other) == other_before


def _statements(fn):
    """(fn()'s result, the SQL statements this thread ran for it)."""
    me = threading.get_ident()
    counted = []

    def count(conn, cursor, statement, *args):
        if threading.get_ident() == me and statement != "BEGIN":
            counted.append(statement)

    db = db_session.get_engine()
    sa.event.listen(db, "before_cursor_execute", count)
    try:
        return fn(), counted
    finally:
        sa.event.remove(db, "before_cursor_execute", count)


def test_a_poll_is_one_statement(engine):
    ctxt = _ctxt("q")
    svc = service.EngineService(engine.ops, engine.services)
    ident = svc.create_stack(ctxt, "cheap", TEMPLATE, {}, {}, None, None, {})
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    ends = changes.ChangesEndpoint()
    marks, counted = _statements(lambda: ends.stack_changes(ctxt, ident))
    assert marks["stack_status"] == "CREATE_COMPLETE"
    assert len(counted) == 1, counted
    _marks, counted = _statements(lambda: ends.project_changes(ctxt))
    assert len(counted) == 1, counted
    # What the page read on every tick before: many more.
    reads = reads_mod.ReadEndpoint(engine.services)
    _all, counted = _statements(
        lambda: (
            reads.show_stack(ctxt, ident),
            reads.list_stack_resources(ctxt, ident),
            reads.list_events(
                ctxt, ident, params={"sort_dir": "desc", "limit": 50}
            ),
            [
                reads.resource_versions(ctxt, ident, name)
                for name in ("app", "front")
            ],
        )
    )
    assert len(counted) > 5, counted


def test_the_stack_mark_moves_when_a_promotion_into_it_completes(engine):
    """The header names the stack's newest COMPLETE promotion, which may
    finish after the stack's own last write."""
    ctxt = _ctxt("m")
    svc = service.EngineService(engine.ops, engine.services)
    ident = svc.create_stack(ctxt, "target", TEMPLATE, {}, {}, None, None, {})
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    ends = changes.ChangesEndpoint()
    before = ends.stack_changes(ctxt, ident)
    db_promotions.promotion_create(
        {
            "id": str(uuid.uuid4()),
            "tenant": ctxt.project_id,
            "target_tenant": ctxt.project_id,
            "status": "COMPLETE",
            "finished_at": models.utcnow(),
            "source_stack_id": str(uuid.uuid4()),
            "source_stack_name": "source",
            "source_template_id": 1,
            "source_template_sha256": "0" * 64,
            "target_stack_id": ident["stack_id"],
            "target_stack_name": "target",
            "spec": {},
        }
    )
    done = ends.stack_changes(ctxt, ident)
    assert done["stack"] != before["stack"]
    assert done["resources"] == before["resources"]
