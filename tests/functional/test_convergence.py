"""Updates converge on one stack ID through versioned resource records."""

import time

from harness import helpers, polling
from tests.resources_ledger import assert_no_leaks

TR = "OS::Heat::TestResource"


def _tr(value, **props):
    return dict({"type": TR, "properties": dict({"value": value}, **props)})


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def _statuses(heat, stack_id):
    return {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }


def _versions(deployment, heat, stack_id, name, history=False):
    """The resource's versions; deleted ones kept as history only with
    ``history``."""
    stack = heat.stacks.get(stack_id, resolve_outputs=False)
    resp = heat.http_client.get(
        "/stacks/%s/%s/resources/%s/versions"
        % (stack.stack_name, stack_id, name)
    )
    return [
        v for v in resp.json()["versions"] if history or v["role"] != "history"
    ]


def test_update_in_place_keeps_physical_ids(deployment, heat):
    tmpl = helpers.template(
        {
            "a": _tr("one"),
            "b": _tr("x", ref={}),
            "c": {"type": "OS::Heat::None"},
        }
    )
    tmpl["resources"]["b"]["properties"] = {"value": {"get_resource": "a"}}
    stack_id = helpers.create(heat, "inplace", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)

    tmpl["resources"]["a"]["properties"]["value"] = "two"
    heat.stacks.update(stack_id, template=tmpl)
    # Accepted: in progress, or already done (three small resources).
    assert heat.stacks.get(stack_id).stack_status in (
        "UPDATE_IN_PROGRESS",
        "UPDATE_COMPLETE",
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    after = _physical(heat, stack_id)
    assert after == before
    versions = _versions(deployment, heat, stack_id, "a")
    assert len(versions) == 1 and versions[0]["role"] == "current"
    assert versions[0]["properties"]["value"] == "two"
    assert _statuses(heat, stack_id)["a"] == "UPDATE_COMPLETE"
    assert _statuses(heat, stack_id)["c"] == "CREATE_COMPLETE"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_replacement_changes_physical_id_and_cleans_up(deployment, heat):
    tmpl = helpers.template(
        {
            "a": _tr("one", update_replace=True),
            "b": {"type": TR, "properties": {"value": {"get_resource": "a"}}},
        }
    )
    stack_id = helpers.create(heat, "replace", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)

    tmpl["resources"]["a"]["properties"]["value"] = "two"
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    after = _physical(heat, stack_id)
    assert after["a"] != before["a"]
    assert after["b"] == before["b"]
    versions = _versions(deployment, heat, stack_id, "a", history=True)
    assert [v["role"] for v in versions] == ["history", "current"]
    assert versions[1]["version"] == 2
    assert versions[0]["physical_resource_id"] == before["a"]
    assert versions[0]["resource_status"] == "DELETE_COMPLETE"
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    order = [(e.resource_name, e.resource_status) for e in events]
    # create-before-delete: the replacement exists, b moves onto it, and
    # only then is the old a deleted.
    assert (
        order.index(("a", "CREATE_COMPLETE"), 2)
        < order.index(("b", "UPDATE_COMPLETE"))
        < order.index(("a", "DELETE_COMPLETE"))
    )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_add_and_remove_resources_and_patch(deployment, heat):
    tmpl = helpers.template(
        {"a": _tr("a"), "b": _tr("b"), "c": {"type": TR, "depends_on": "b"}},
        parameters={"p": {"type": "string", "default": "d"}},
    )
    stack_id = helpers.create(
        heat, "addremove", tmpl, parameters={"p": "given"}
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)
    new = helpers.template(
        {
            "a": _tr("a"),
            "d": _tr(
                "d",
            ),
            "e": {"type": TR, "depends_on": "d"},
        },
        parameters={"p": {"type": "string", "default": "d"}},
    )
    heat.stacks.update(stack_id, template=new, existing=True)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    after = _physical(heat, stack_id)
    assert set(after) == {"a", "d", "e"}
    assert after["a"] == before["a"]
    stack = heat.stacks.get(stack_id)
    assert stack.parameters["p"] == "given"  # PATCH kept the parameter

    heat.stacks.update(stack_id, existing=True, clear_parameters=["p"])
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.stacks.get(stack_id).parameters["p"] == "d"
    assert set(_physical(heat, stack_id)) == {"a", "d", "e"}
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def _slow_chain(n, value, wait):
    resources = {}
    for i in range(n):
        res = _tr(value, wait_secs=wait)
        if i:
            res["depends_on"] = "r%d" % (i - 1)
        resources["r%d" % i] = res
    return helpers.template(resources)


def _resource_updating(heat, stack_id):
    """Wait until the update is under way: a resource is updating."""
    polling.until(
        lambda: any(
            r.resource_status == "UPDATE_IN_PROGRESS"
            for r in heat.resources.list(stack_id)
        ),
        30,
        "a resource of %s updating" % stack_id,
    )


def test_update_while_update_in_progress(deployment, heat):
    stack_id = helpers.create(heat, "racing", _slow_chain(3, "v0", 0))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(stack_id, template=_slow_chain(3, "v1", 1))
    _resource_updating(heat, stack_id)
    assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    final = _slow_chain(4, "v2", 0)
    final["resources"]["r1"]["properties"]["update_replace_value"] = "new"
    heat.stacks.update(stack_id, template=final)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=60)
    records = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(records) == {"r0", "r1", "r2", "r3"}
    for name in records:
        versions = _versions(deployment, heat, stack_id, name)
        assert [v["role"] for v in versions] == ["current"], versions
        assert versions[-1]["properties"]["value"] == "v2"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_failed_update_rolls_back_to_original_ids(deployment, heat):
    tmpl = helpers.template(
        {"a": _tr("one", update_replace=True), "b": _tr("b")}
    )
    stack_id = helpers.create(heat, "rollback", tmpl, disable_rollback=False)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)
    bad = helpers.template(
        {
            "a": _tr("two", update_replace=True),
            "b": {
                "type": TR,
                "depends_on": "a",
                "properties": {"value": "b2", "fail": True},
            },
        }
    )
    heat.stacks.update(stack_id, template=bad)
    stack = helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE")
    assert _physical(heat, stack_id) == before
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    failed = [
        e
        for e in events
        if e.resource_status == "UPDATE_FAILED"
        and e.resource_name == "rollback"
    ]
    assert (
        failed and "Test Resource failed b" in failed[0].resource_status_reason
    )
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_failed_update_without_rollback_is_recovered(deployment, heat):
    tmpl = helpers.template({"a": _tr("one")})
    stack_id = helpers.create(heat, "norollback", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(
        stack_id, template=helpers.template({"a": _tr("two", fail=True)})
    )
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert (
        "Resource UPDATE failed: ValueError: resources.a: "
        "Test Resource failed a" == stack.stack_status_reason
    )
    heat.stacks.update(
        stack_id, template=helpers.template({"a": _tr("three")})
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_cancel_and_delete_during_update(deployment, heat):
    stack_id = helpers.create(heat, "cancel", _slow_chain(2, "v0", 0))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(stack_id, template=_slow_chain(3, "v1", 1))
    _resource_updating(heat, stack_id)
    heat.actions.cancel_without_rollback(stack_id)
    stack = heat.stacks.get(stack_id)
    assert stack.stack_status == "UPDATE_FAILED"
    assert stack.stack_status_reason == "Stack UPDATE cancelled"

    heat.stacks.update(stack_id, template=_slow_chain(3, "v2", 1))
    time.sleep(0.3)
    heat.actions.cancel_update(stack_id)
    helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE", timeout=60)

    heat.stacks.update(stack_id, template=_slow_chain(3, "v3", 2))
    time.sleep(0.3)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert_no_leaks(deployment)


def test_three_racing_updates_and_a_failing_one(deployment, heat):
    stack_id = helpers.create(heat, "three", _slow_chain(3, "v0", 0))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    failing = _slow_chain(3, "bad", 0.5)
    failing["resources"]["r1"]["properties"]["fail"] = True
    heat.stacks.update(stack_id, template=failing)
    time.sleep(0.2)
    heat.stacks.update(stack_id, template=_slow_chain(2, "v2", 0.5))
    time.sleep(0.1)
    final = _slow_chain(5, "v3", 0.1)
    final["resources"]["r0"]["properties"]["update_replace"] = True
    heat.stacks.update(stack_id, template=final)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=60)
    for name in ("r0", "r1", "r2", "r3", "r4"):
        versions = _versions(deployment, heat, stack_id, name)
        assert [v["role"] for v in versions] == ["current"]
        assert versions[0]["properties"]["value"] == "v3"
        assert versions[0]["properties"]["fail"] is False
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def test_suspend_resume_check(deployment, heat):
    tmpl = helpers.template(
        {"a": _tr("a"), "b": {"type": TR, "depends_on": "a"}}
    )
    stack_id = helpers.create(heat, "suspend", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)
    heat.actions.suspend(stack_id)
    helpers.wait_for_status(heat, stack_id, "SUSPEND_COMPLETE")
    assert set(_statuses(heat, stack_id).values()) == {"SUSPEND_COMPLETE"}
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    order = [
        e.resource_name
        for e in events
        if e.resource_status == "SUSPEND_COMPLETE"
    ]
    assert order == ["b", "a", "suspend"]  # dependents first
    heat.actions.resume(stack_id)
    helpers.wait_for_status(heat, stack_id, "RESUME_COMPLETE")
    heat.actions.check(stack_id)
    helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE")
    assert _physical(heat, stack_id) == before
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)
