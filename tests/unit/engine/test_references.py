"""Which values of a property are still in use (``list_references``),
current vs only retained for rollback, across a verified update (the
replaced record kept while it verifies), its rollback, an update that
passes, and a failed update without rollback (the last COMPLETE
template holds the old value)."""

import uuid

from heat_lite.common import context, exception
from heat_lite.db import api as db_api
from heat_lite.db import verifications
from heat_lite.engine.endpoint import references, service
from heat_lite.resources import services
from tests.unit.engine.test_rollouts import _raises, _stack_status, _wait

TR = "OS::Heat::TestResource"


def _template(image, fail=False):
    props = {"value": image, "update_replace": True}
    if fail:
        props["fail"] = True
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "server": {"type": TR, "properties": props},
            "other": {"type": "OS::Heat::None"},
        },
    }


def _counts(ctxt):
    found = references.ReferenceEndpoint(services.UNAVAILABLE).list_references(
        ctxt, TR, "value"
    )
    return {
        r["value"]: (r["stacks"], r["current"], r["retained"]) for r in found
    }


def _verifying(stack_id):
    row = verifications.verification_get(
        db_api.stack_get(stack_id)["current_traversal"]
    )
    return row is not None and row["started_at"] is not None


def test_current_and_retained_across_update_and_rollback(engine):
    ctxt = context.RequestContext(
        project_id="r" + uuid.uuid4().hex[:8], user_id="u", overwrite=False
    )
    svc = service.EngineService(engine.ops, engine.services)
    ids = []
    for i, image in enumerate(("img-1", "img-1", "img-2")):
        ident = svc.create_stack(
            ctxt, "s%d" % i, _template(image), {}, {}, None, None, {}
        )
        ids.append(ident["stack_id"])
    for stack_id in ids:
        _wait(lambda s=stack_id: _stack_status(s) == "CREATE_COMPLETE")
    assert _counts(ctxt) == {"img-1": (2, 2, 0), "img-2": (1, 1, 0)}
    # Another project sees none of it; all_projects is for admins.
    other = context.RequestContext(project_id="x", overwrite=False)
    assert _counts(other) == {}
    with _raises(exception.Forbidden):
        references.ReferenceEndpoint(services.UNAVAILABLE).list_references(
            other, TR, "value", all_projects=True
        )
    # s0 moves to img-3, held verifying: img-1 is kept for rollback.
    signal = {"verify": {"timeout": 60, "checks": [{"type": "signal"}]}}
    first = {"stack_id": ids[0]}
    svc.update_stack(
        ctxt, first, _template("img-3"), {}, {}, None, None, signal
    )
    _wait(lambda: _verifying(ids[0]), what="verifying")
    assert _counts(ctxt) == {
        "img-1": (2, 1, 1),
        "img-2": (1, 1, 0),
        "img-3": (1, 1, 0),
    }
    # The verification fails: the rollback revives img-1, img-3 is gone.
    svc.stack_verdict(ctxt, first, "FAIL", "broken")
    _wait(lambda: _stack_status(ids[0]) == "ROLLBACK_COMPLETE")
    assert _counts(ctxt) == {"img-1": (2, 2, 0), "img-2": (1, 1, 0)}
    # Again, and it passes: img-1 is left to s1 alone.
    svc.update_stack(
        ctxt, first, _template("img-3"), {}, {}, None, None, signal
    )
    _wait(lambda: _verifying(ids[0]), what="verifying")
    svc.stack_verdict(ctxt, first, "PASS")
    _wait(lambda: _stack_status(ids[0]) == "UPDATE_COMPLETE")
    assert _counts(ctxt) == {
        "img-1": (1, 1, 0),
        "img-2": (1, 1, 0),
        "img-3": (1, 1, 0),
    }
    # s2's update fails without rollback: its last COMPLETE template
    # (img-2) is what a rollback would bring back, so img-2 is retained.
    svc.update_stack(
        ctxt,
        {"stack_id": ids[2]},
        _template("img-4", fail=True),
        {},
        {},
        None,
        None,
        {"disable_rollback": True},
    )
    _wait(lambda: _stack_status(ids[2]) == "UPDATE_FAILED")
    counts = _counts(ctxt)
    assert counts["img-2"][0] == 1 and counts["img-2"][2] == 1, counts
