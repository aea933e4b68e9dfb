"""deletion_policy, external_id and the environment's restricted_actions."""

from harness import helpers
from heat_lite.resources import test_resource

TR = "OS::Heat::TestResource"


def _physical(heat, stack_id):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(stack_id)
    }


def test_retain_and_external_id(deployment, heat):
    tmpl = helpers.template(
        {
            "kept": {
                "type": TR,
                "deletion_policy": "Retain",
                "properties": {"value": "k"},
            },
            "adopted": {
                "type": TR,
                "external_id": "pre-existing-thing",
                "properties": {"value": "a"},
            },
            "plain": {"type": TR, "properties": {"value": "p"}},
        }
    )
    stack_id = helpers.create(heat, "policies", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    physical = _physical(heat, stack_id)
    assert physical["adopted"] == "pre-existing-thing"
    tmpl["resources"]["adopted"]["external_id"] = "another-thing"
    heat.stacks.update(stack_id, template=tmpl)
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert "external_id" in stack.stack_status_reason
    # Nor can a resource made here become someone else's (as Heat).
    tmpl["resources"]["adopted"]["external_id"] = "pre-existing-thing"
    tmpl["resources"]["plain"]["external_id"] = "someone-elses"
    heat.stacks.update(stack_id, template=tmpl)
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert "external_id of plain" in stack.stack_status_reason
    assert _physical(heat, stack_id)["plain"] == physical["plain"]
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    created, deleted = test_resource.read_ledger(deployment.ledger)
    assert physical["kept"] in created and physical["kept"] not in deleted
    assert physical["plain"] in deleted
    assert "pre-existing-thing" not in created | deleted
    # The operator now removes the retained resource by hand, so that the
    # shared ledger of this deployment shows no leak to later tests.
    with open(deployment.ledger, "a") as ledger:
        ledger.write("delete %s\n" % physical["kept"])


def test_restricted_actions(deployment, heat):
    env = {
        "resource_registry": {
            "resources": {
                "frozen": {"restricted_actions": "update"},
                "pinned": {"restricted_actions": ["replace"]},
            }
        }
    }
    tmpl = helpers.template(
        {
            "frozen": {"type": TR, "properties": {"value": "1"}},
            "pinned": {
                "type": TR,
                "properties": {"value": "1", "update_replace": True},
            },
        }
    )
    stack_id = helpers.create(heat, "restricted", tmpl, environment=env)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = _physical(heat, stack_id)

    changed = helpers.template(
        {
            "frozen": {"type": TR, "properties": {"value": "2"}},
            "pinned": {
                "type": TR,
                "properties": {"value": "1", "update_replace": True},
            },
        }
    )
    heat.stacks.update(stack_id, template=changed, environment=env)
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert "update is restricted for resource." in stack.stack_status_reason
    statuses = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    assert statuses["frozen"] == "CREATE_COMPLETE"

    replaced = helpers.template(
        {
            "frozen": {"type": TR, "properties": {"value": "1"}},
            "pinned": {
                "type": TR,
                "properties": {"value": "2", "update_replace": True},
            },
        }
    )
    heat.stacks.update(stack_id, template=replaced, environment=env)
    stack = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert "replace is restricted for resource." in stack.stack_status_reason
    assert _physical(heat, stack_id) == before
    events = list(heat.events.list(stack_id, resource_name="pinned"))
    assert any(e.resource_status == "UPDATE_FAILED" for e in events)
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
