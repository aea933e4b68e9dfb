"""References to nested stacks and the order of their events: the ARN a
template resource's ``get_resource`` (and a group's ``refs``) gives names
the real project and resolves with ``GET /stacks/<arn>``; with
nested_depth, a parent resource's IN_PROGRESS event comes before its
child stack's "Stack <ACTION> started"."""

import uuid
from urllib import parse

import yaml

from harness import helpers

LEAF = yaml.safe_dump(helpers.template({"l": {"type": "OS::Heat::None"}}))


def _template():
    return helpers.template(
        {
            "tr": {"type": "leaf.yaml"},
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {"type": "leaf.yaml"},
                },
            },
            "after": {"type": "OS::Heat::None", "depends_on": ["tr", "group"]},
        },
        outputs={
            "tr_ref": {"value": {"get_resource": "tr"}},
            "group_ref": {"value": {"get_resource": "group"}},
            "refs": {"value": {"get_attr": ["group", "refs"]}},
            "refs_map": {"value": {"get_attr": ["group", "refs_map"]}},
        },
    )


def _outputs(heat, stack_id):
    return {
        o["output_key"]: o.get("output_value")
        for o in heat.stacks.get(stack_id).outputs
    }


def _check_arn(heat, project, arn):
    prefix = "arn:openstack:heat::%s:stacks/" % project
    assert arn.startswith(prefix), arn
    name, stack_id = arn[len(prefix) :].split("/")
    for ref in (arn, parse.quote(arn, safe="")):
        shown = heat.stacks.get(ref)
        assert (shown.id, shown.stack_name) == (stack_id, name)
    return stack_id


def test_references_are_arns_of_the_project(deployment):
    project = "arn" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    stack_id = helpers.create(
        heat, "refs", _template(), files={"leaf.yaml": LEAF}
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    outputs = _outputs(heat, stack_id)
    tr = heat.resources.get(stack_id, "tr")
    assert (
        _check_arn(heat, project, outputs["tr_ref"]) == tr.physical_resource_id
    )
    # A group is not a template resource: get_resource gives the nested
    # stack's id, as Heat's does; its members' refs are ARNs.
    group = heat.resources.get(stack_id, "group")
    assert outputs["group_ref"] == group.physical_resource_id
    members = {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(group.physical_resource_id)
    }
    assert [_check_arn(heat, project, ref) for ref in outputs["refs"]] == [
        members["0"],
        members["1"],
    ]
    assert {
        k: _check_arn(heat, project, v) for k, v in outputs["refs_map"].items()
    } == members
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def _stack_of(event):
    """Id of the stack an event belongs to (its ``stack`` link)."""
    href = next(link["href"] for link in event.links if link["rel"] == "stack")
    return href.rstrip("/").split("/")[-1]


def _position(events, stack_name, reason):
    """Index of the first event of ``stack_name`` with ``reason``."""
    return next(
        i
        for i, e in enumerate(events)
        if e.resource_name == stack_name and e.resource_status_reason == reason
    )


def test_nested_events_in_the_order_they_happened(deployment):
    project = "ev" + uuid.uuid4().hex[:8]
    heat = deployment.client(project)
    stack_id = helpers.create(
        heat, "ordered", _template(), files={"leaf.yaml": LEAF}
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(
        stack_id, template=_template(), files={"leaf.yaml": LEAF}
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    events = list(heat.events.list(stack_id, nested_depth=3, sort_dir="asc"))
    nested = [
        s
        for s in heat.stacks.list(show_nested=True)
        if s.stack_name.startswith("ordered-")
    ]
    assert len(nested) == 4
    parents = {s.id: s for s in nested}
    parents[stack_id] = heat.stacks.get(stack_id)
    for child in nested:
        owner = parents[child.parent]
        resource = next(
            r
            for r in heat.resources.list(owner.id)
            if r.physical_resource_id == child.id
        )
        for action in ("CREATE", "UPDATE"):
            mine = [
                i
                for i, e in enumerate(events)
                if e.resource_name == resource.resource_name
                and e.resource_status == action + "_IN_PROGRESS"
                and _stack_of(e) == owner.id
            ]
            started = _position(
                events, child.stack_name, "Stack %s started" % action
            )
            done = _position(
                events,
                child.stack_name,
                "Stack %s completed successfully" % action,
            )
            finished = [
                i
                for i, e in enumerate(events)
                if e.resource_name == resource.resource_name
                and e.resource_status == action + "_COMPLETE"
                and _stack_of(e) == owner.id
            ]
            assert mine and mine[0] < started < done < finished[0], (
                child.stack_name,
                action,
            )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
