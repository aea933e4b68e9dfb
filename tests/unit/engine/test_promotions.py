"""Promotions in one engine process (SQLite file, fake:// transport): a
tested stack's template into a new or an existing stack of another
project with an overlay, the gate and its undo, provenance, the one-step
rollback, the refusals, and a takeover that starts nothing twice."""

import uuid

import pytest

from heat_lite.common import context, exception
from heat_lite.db import api as db_api
from heat_lite.db import promotions as db_promotions
from heat_lite.db import verifications
from heat_lite.engine.endpoint import service
from heat_lite.engine.fleet.promotion import endpoint as promotion_endpoint
from tests.unit.engine.test_rollouts import (
    NEW,
    OLD,
    SIGNALLED,
    VERIFY,
    _passed,
    _physical,
    _raises,
    _stack_status,
    _version,
    _wait,
    app_template,
)


def _ctxt(project, *roles):
    return context.RequestContext(
        project_id=project,
        user_id="release",
        roles=list(roles),
        is_admin="admin" in roles,
        overwrite=False,
    )


@pytest.fixture
def projects():
    suffix = uuid.uuid4().hex[:6]
    return _ctxt("test-" + suffix, "admin"), "prod-" + suffix


def _create(engine, ctxt, name, params=None):
    ident = service.EngineService(engine.ops, engine.services).create_stack(
        ctxt, name, app_template(), params or {}, {}, None, None, {}
    )
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    return ident["stack_id"]


def _endpoint(engine):
    return promotion_endpoint.PromotionEndpoint(
        engine.promotions, engine.services
    )


def _done(endpoint, ctxt, promotion_id):
    return _wait(
        lambda: (lambda p: p if p["status"] != "IN_PROGRESS" else None)(
            endpoint.show_promotion(ctxt, promotion_id)
        ),
        90,
        "promotion finished",
    )


def _body(source, target, project=None, **extra):
    body = {
        "source": {"stack": source},
        "target": {"stack": target},
        "parameters": {"php_version": NEW},
        "verify": VERIFY,
    }
    if project:
        body["target"]["project"] = project
    body.update(extra)
    return body


def test_promote_into_a_new_stack_of_another_project(engine, projects):
    test, prod = projects
    source_id = _create(engine, test, "app1-test", {"replace": True})
    endpoint = _endpoint(engine)
    body = _body(
        "app1-test",
        "app1-prod",
        prod,
        environment={"parameter_defaults": {"broken_on": "never"}},
        reset_parameters=["replace"],
    )
    made = endpoint.create_promotion(test, body)
    assert made["status"] == "IN_PROGRESS" and made["target"]["created"]
    done = _done(endpoint, test, made["id"])
    assert done["status"] == "COMPLETE", done["status_reason"]
    assert "all checks passed" in done["status_reason"]
    assert done["source"]["stack_id"] == source_id
    assert len(done["source"]["template_sha256"]) == 64
    target = db_api.stack_get(done["target"]["stack_id"])
    assert target["tenant"] == prod and target["name"] == "app1-prod"
    assert _stack_status(target["id"]) == "CREATE_COMPLETE"
    env = db_api.raw_template_get(target["raw_template_id"])["environment"]
    assert env["parameters"] == {"php_version": NEW}  # replace was reset
    assert env["parameter_defaults"] == {"broken_on": "never"}
    # Visible from both projects, nowhere else.
    prod_ctxt = _ctxt(prod, "member")
    assert endpoint.show_promotion(prod_ctxt, made["id"])["id"] == made["id"]
    assert [p["id"] for p in endpoint.list_promotions(test)] == [made["id"]]
    with _raises(exception.PromotionNotFound):
        endpoint.show_promotion(_ctxt("other", "admin"), made["id"])
    assert endpoint.list_promotions(_ctxt("other", "admin")) == []
    # Provenance on the target.
    ident = {"stack_id": target["id"]}
    shown = service.endpoints(engine.ops, engine.services)[1].show_stack(
        prod_ctxt, ident
    )
    assert shown["promoted_from"]["promotion_id"] == made["id"]
    assert shown["promoted_from"]["stack_name"] == "app1-test"
    history = endpoint.stack_promotions(prod_ctxt, ident)
    assert [p["id"] for p in history] == [made["id"]]


def test_a_failing_gate_leaves_the_target_as_it_was(engine, projects):
    test, prod = projects
    _create(engine, test, "app2-test", {"replace": True})
    prod_ctxt = _ctxt(prod, "admin")
    target_id = _create(engine, prod_ctxt, "app2-prod")
    before = _physical(target_id)
    endpoint = _endpoint(engine)
    body = _body("app2-test", "app2-prod", prod)
    body["parameters"]["broken_on"] = NEW
    made = endpoint.create_promotion(test, body)
    assert not made["target"]["created"]
    done = _done(endpoint, test, made["id"])
    assert done["status"] == "FAILED"
    assert done["status_reason"].startswith("gate failed: rolled back")
    assert "healthy" in done["status_reason"]
    assert _stack_status(target_id) == "ROLLBACK_COMPLETE"
    assert _physical(target_id) == before
    assert _version(target_id) == OLD
    shown = service.endpoints(engine.ops, engine.services)[1].show_stack(
        prod_ctxt, {"stack_id": target_id}
    )
    assert shown["promoted_from"] is None
    # A failed promotion does not roll back.
    with _raises(exception.PromotionConflict, match="only a COMPLETE"):
        endpoint.promotion_action(test, made["id"], "rollback")


def test_a_created_target_whose_gate_fails_is_deleted(engine, projects):
    test, prod = projects
    _create(engine, test, "app3-test")
    endpoint = _endpoint(engine)
    body = _body("app3-test", "app3-prod", prod)
    body["parameters"]["broken_on"] = NEW
    done = _done(endpoint, test, endpoint.create_promotion(test, body)["id"])
    assert done["status"] == "FAILED"
    assert "the stack it created was deleted" in done["status_reason"]
    assert db_api.stack_get(done["target"]["stack_id"])["deleted_at"]


def test_rollback_and_the_newer_promotion_conflict(engine, projects):
    test, prod = projects
    _create(engine, test, "app4-test", {"replace": True})
    prod_ctxt = _ctxt(prod, "admin")
    target_id = _create(engine, prod_ctxt, "app4-prod")
    before = _physical(target_id)
    endpoint = _endpoint(engine)
    first = _done(
        endpoint,
        test,
        endpoint.create_promotion(test, _body("app4-test", target_id, prod))[
            "id"
        ],
    )
    assert first["status"] == "COMPLETE", first["status_reason"]
    assert _version(target_id) == NEW
    assert _physical(target_id)["app"] != before["app"]  # replaced
    second = _done(
        endpoint,
        test,
        endpoint.create_promotion(
            test,
            _body(
                "app4-test", "app4-prod", prod, parameters={"php_version": "7"}
            ),
        )["id"],
    )
    assert second["status"] == "COMPLETE", second["status_reason"]
    with _raises(exception.PromotionConflict, match="newer promotion"):
        endpoint.promotion_action(prod_ctxt, first["id"], "rollback")
    with _raises(exception.InvalidPromotion):
        endpoint.promotion_action(prod_ctxt, second["id"], "explode")
    endpoint.promotion_action(prod_ctxt, second["id"], "rollback")
    back = _done(endpoint, test, second["id"])
    assert back["status"] == "ROLLED_BACK", back["status_reason"]
    assert back["rolled_back"]
    assert _version(target_id) == NEW
    # Overtaken for good: only the newest promotion of a stack rolls
    # back, even once that one is rolled back (the holds of the first on
    # the images it could bring back went at the second's COMPLETE).
    with _raises(exception.PromotionConflict, match="newest promotion"):
        endpoint.promotion_action(prod_ctxt, first["id"], "rollback")
    assert _done(endpoint, test, first["id"])["status"] == "COMPLETE"
    assert _version(target_id) == NEW
    history = endpoint.stack_promotions(prod_ctxt, {"stack_id": target_id})
    assert [p["id"] for p in history] == [second["id"], first["id"]]


def test_refusals_change_nothing(engine, projects, hold):
    test, prod = projects
    endpoint = _endpoint(engine)
    with _raises(exception.StackNotFound):
        endpoint.create_promotion(test, _body("nope", "x", prod))
    source_id = _create(engine, test, "app5-test")
    bad = _body("app5-test", "x", prod, parameters={"undeclared": 1})
    with _raises(exception.UnknownUserParameter):
        endpoint.create_promotion(test, bad)
    bad = _body("app5-test", "x", prod, reset_parameters=["undeclared"])
    with _raises(exception.InvalidPromotion, match="undeclared"):
        endpoint.create_promotion(test, bad)
    member = _ctxt(test.project_id, "member")
    with _raises(exception.Forbidden, match="create_cross_project"):
        endpoint.create_promotion(member, _body("app5-test", "x", prod))
    # Busy target, then busy source (both with someone else's update).
    prod_ctxt = _ctxt(prod, "admin")
    target_id = _create(engine, prod_ctxt, "app5-prod")
    svc = service.EngineService(engine.ops, engine.services)
    slow = app_template()
    slow["resources"]["app"]["properties"] = {"value": "x", "hold": "busy"}
    for ctxt, stack_id in ((prod_ctxt, target_id), (test, source_id)):
        with hold("busy"):
            svc.update_stack(
                ctxt, {"stack_id": stack_id}, slow, {}, {}, None, None, {}
            )
            with _raises(exception.PromotionConflict, match="IN_PROGRESS"):
                endpoint.create_promotion(
                    test, _body("app5-test", "app5-prod", prod)
                )
            svc.stack_cancel_update(ctxt, {"stack_id": stack_id})
        _wait(lambda s=stack_id: _stack_status(s) == "ROLLBACK_COMPLETE")
    assert endpoint.list_promotions(test) == []
    assert db_promotions.promotions_of_stack(target_id) == []


def test_another_engine_life_resumes_the_gate(engine, projects):
    """The owner loses the promotion while its gate waits for a signal:
    the keeper's claim resumes the flow, which follows the update it had
    started instead of starting another."""
    test, prod = projects
    _create(engine, test, "app6-test")
    prod_ctxt = _ctxt(prod, "admin")
    target_id = _create(engine, prod_ctxt, "app6-prod")
    endpoint = _endpoint(engine)
    signal = SIGNALLED
    made = endpoint.create_promotion(
        test, _body("app6-test", "app6-prod", prod, verify=signal)
    )
    pid = made["id"]

    def verifying():
        stack = db_api.stack_get(target_id)
        row = verifications.verification_get(stack["current_traversal"])
        return row is not None and row["started_at"] is not None

    _wait(verifying, what="target verifying")
    first = engine.promotions.thread(pid)
    assert first is not None and first.is_alive()
    db_promotions.promotion_claim(pid, engine.fence.owner, ("gone", 1))
    # Its thread ends (the keeper may start the next run at once).
    _wait(lambda: not first.is_alive(), what="flow stopped")
    # A pass does nothing while the lease looks stale (a loaded machine
    # delays heartbeats): pass again until it resumed the flow.
    _wait(
        lambda: (
            _passed(engine.promotions)
            and engine.promotions.running(pid)
            and engine.promotions.thread(pid) is not first
        ),
        what="resumed",
    )
    svc = service.EngineService(engine.ops, engine.services)
    svc.stack_verdict(prod_ctxt, {"stack_id": target_id}, "PASS")
    done = _done(endpoint, test, pid)
    assert done["status"] == "COMPLETE", done["status_reason"]
    assert len(verifications.verifications_of_stack(target_id)) == 1


def _secret_template():
    template = app_template()
    template["parameters"]["secret"] = {
        "type": "string",
        "hidden": True,
        "default": "default-secret",
    }
    return template


def _create_from(engine, ctxt, name, template, params):
    ident = service.EngineService(engine.ops, engine.services).create_stack(
        ctxt, name, template, params, {}, None, None, {}
    )
    _wait(lambda: _stack_status(ident["stack_id"]) == "CREATE_COMPLETE")
    return ident["stack_id"]


def test_preview_says_what_would_change_and_changes_nothing(engine, projects):
    test, prod = projects
    template = _secret_template()
    source_id = _create_from(engine, test, "app7-test", template, {})
    endpoint = _endpoint(engine)
    # Into a stack that does not exist yet: everything is added.
    shown = endpoint.preview_promotion(test, _body("app7-test", "new", prod))
    assert shown["source"] == {
        "stack": "app7-test",
        "id": source_id,
        "project": test.project_id,
    }
    assert shown["target"] == {
        "stack": "new",
        "id": None,
        "project": prod,
        "exists": False,
    }
    assert shown["template_changed"] is True
    assert shown["parameters"]["php_version"] == {"promoted": NEW}
    assert shown["resources"]["added"] == ["app", "db"]
    assert shown["dropped"] == {} and shown["verify"] == VERIFY
    # Into an existing stack with its own overlay and a hidden value.
    prod_ctxt = _ctxt(prod, "admin")
    target_id = _create_from(
        engine,
        prod_ctxt,
        "app7-prod",
        template,
        {"replace": True, "secret": "prod-secret"},
    )
    before = db_api.stack_get(target_id)
    shown = endpoint.preview_promotion(
        test, _body("app7-test", "app7-prod", prod)
    )
    assert shown["target"]["id"] == target_id
    assert shown["target"]["exists"] is True
    assert shown["template_changed"] is False
    params = shown["parameters"]
    assert params["php_version"] == {"current": OLD, "promoted": NEW}
    assert params["replace"] == {"current": True, "promoted": False}
    assert params["secret"] == {"current": "******", "promoted": "******"}
    # The target's own parameters the promotion does not carry over;
    # the hidden one never shown.
    assert shown["dropped"] == {
        "parameters": {"replace": True, "secret": "******"}
    }
    assert "prod-secret" not in repr(shown)
    assert shown["resources"]["unchanged"] == ["db"]
    assert shown["resources"]["added"] == []
    assert shown["resources"]["deleted"] == []
    assert (
        "app"
        in shown["resources"]["replaced"] + (shown["resources"]["updated"])
    )
    # Refused as the promotion would be, and nothing changed.
    bad = _body("app7-test", "app7-prod", prod, parameters={"undeclared": 1})
    with _raises(exception.UnknownUserParameter):
        endpoint.preview_promotion(test, bad)
    member = _ctxt(test.project_id, "member")
    with _raises(exception.Forbidden, match="create_cross_project"):
        endpoint.preview_promotion(member, _body("app7-test", "x", prod))
    assert endpoint.list_promotions(test) == []
    after = db_api.stack_get(target_id)
    assert after["raw_template_id"] == before["raw_template_id"]
    assert after["updated_at"] == before["updated_at"]
    with pytest.raises(exception.StackNotFound):
        db_api.stack_get_by_name(prod, "new")
