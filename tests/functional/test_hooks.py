"""Breakpoints from the environment pause one resource while the rest of
the graph goes on, until a signal clears them."""

from heatclient import exc

from harness import helpers, polling


def _events(heat, stack_id, name):
    # heatclient answers 404 for a resource that has no event yet (its
    # node not reached): as a poll, that is "none yet".
    try:
        listed = heat.events.list(stack_id, resource_name=name)
    except exc.HTTPNotFound:
        return []
    return [e.resource_status_reason for e in listed]


def test_pre_create_and_post_update_hooks(deployment, heat):
    env = {
        "resource_registry": {
            "resources": {"held": {"hooks": ["pre-create", "post-update"]}}
        }
    }
    tmpl = helpers.template(
        {
            "held": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "1"},
            },
            "free": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "1"},
            },
            "after": {"type": "OS::Heat::None", "depends_on": "held"},
        }
    )
    stack_id = helpers.create(heat, "hooks", tmpl, environment=env)
    polling.until(
        lambda: (
            "CREATE paused until Hook pre-create is cleared"
            in _events(heat, stack_id, "held")
        )
    )
    statuses = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    polling.until(
        lambda: (
            {
                r.resource_name: r.resource_status
                for r in heat.resources.list(stack_id)
            }["free"]
            == "CREATE_COMPLETE"
        )
    )
    statuses = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    assert statuses["held"] == "INIT_COMPLETE"
    assert statuses["after"] == "INIT_COMPLETE"
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    heat.resources.signal(stack_id, "held", data={"unset_hook": "pre-create"})
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert "Hook pre-create is cleared" in _events(heat, stack_id, "held")

    tmpl["resources"]["held"]["properties"]["value"] = "2"
    heat.stacks.update(stack_id, template=tmpl, environment=env)
    polling.until(
        lambda: (
            "UPDATE paused until Hook post-update is cleared"
            in _events(heat, stack_id, "held")
        )
    )
    assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    heat.resources.signal(stack_id, "held", data={"unset_hook": "post-update"})
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_pre_update_hook_on_an_unchanged_resource(deployment, heat):
    """Heat stops at a pre-update hook before it decides whether the
    resource changed: the same template again waits there too."""
    env = {"resource_registry": {"resources": {"b": {"hooks": "pre-update"}}}}
    tmpl = helpers.template(
        {
            "a": {"type": "OS::Heat::RandomString"},
            "b": {"type": "OS::Heat::RandomString", "depends_on": "a"},
            "c": {"type": "OS::Heat::RandomString", "depends_on": "b"},
        }
    )
    stack_id = helpers.create(heat, "nochange", tmpl, environment=env)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    before = heat.resources.get(stack_id, "b").physical_resource_id
    heat.stacks.update(stack_id, template=tmpl, environment=env)
    polling.until(
        lambda: (
            "UPDATE paused until Hook pre-update is cleared"
            in _events(heat, stack_id, "b")
        )
    )
    assert heat.resources.get(stack_id, "b").resource_status == (
        "CREATE_COMPLETE"
    )
    assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    heat.resources.signal(stack_id, "b", data={"unset_hook": "pre-update"})
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert "Hook pre-update is cleared" in _events(heat, stack_id, "b")
    after = heat.resources.get(stack_id, "b")
    assert after.physical_resource_id == before
    assert after.resource_status == "CREATE_COMPLETE"
