"""ResourceGroup batches: batch_create and rolling_update, with
``pause_time`` between batches and ``min_in_service`` shrinking them,
shown by the nested stack's events (their order and timestamps)."""

import datetime
import uuid

from harness import helpers


def _group(value, policy, count=4):
    return helpers.template(
        {
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "update_policy": policy,
                "properties": {
                    "count": count,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        # Slow enough that the members of one batch overlap.
                        "properties": {
                            "value": value,
                            "action_wait_secs": {"create": 0.4, "update": 0.4},
                        },
                    },
                },
            }
        },
        outputs={"values": {"value": {"get_attr": ["g", "output"]}}},
    )


def _events(heat, stack_id, action):
    """[(member, status, time)] of the group's members, oldest first."""
    nested = heat.resources.get(stack_id, "g").physical_resource_id
    result = []
    for event in heat.events.list(nested, sort_dir="asc"):
        status = event.resource_status
        if event.resource_name.isdigit() and status.startswith(action):
            when = datetime.datetime.strptime(
                event.event_time, "%Y-%m-%dT%H:%M:%SZ"
            )
            result.append((event.resource_name, status.split("_", 1)[1], when))
    return result


def _batches(events):
    """The members in the order their actions ran, cut where none of
    them was running: [[members], ...] with the time each batch started
    and the last one ended."""
    batches, running = [], set()
    for name, status, when in events:
        if status == "IN_PROGRESS":
            if not running:
                batches.append({"members": [], "start": when, "end": when})
            running.add(name)
            batches[-1]["members"].append(name)
        elif status in ("COMPLETE", "FAILED"):
            running.discard(name)
            batches[-1]["end"] = when
    return batches


def _gaps(batches):
    return [
        (b["start"] - a["end"]).total_seconds()
        for a, b in zip(batches, batches[1:], strict=False)
    ]


def _values(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}[
        "values"
    ]


def test_batch_create_and_rolling_update_pause(heat):
    policy = {
        "batch_create": {"max_batch_size": 2, "pause_time": 1},
        "rolling_update": {
            "max_batch_size": 3,
            "min_in_service": 2,
            "pause_time": 1,
        },
    }
    stack_id = helpers.create(
        heat, "bp" + uuid.uuid4().hex[:6], _group("a", policy)
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    created = _batches(_events(heat, stack_id, "CREATE"))
    assert [sorted(b["members"]) for b in created] == [["0", "1"], ["2", "3"]]
    assert all(gap >= 1 for gap in _gaps(created))

    # Batches of 3, shrunk to 2 so that 2 of the 4 stay in service.
    heat.stacks.update(stack_id, template=_group("b", policy))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    updated = _batches(_events(heat, stack_id, "UPDATE"))
    assert [sorted(b["members"]) for b in updated] == [["0", "1"], ["2", "3"]]
    assert all(gap >= 1 for gap in _gaps(updated))
    assert _values(heat, stack_id) == ["b"] * 4
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_min_in_service_without_pause_orders_in_one_traversal(heat):
    policy = {"rolling_update": {"max_batch_size": 4, "min_in_service": 3}}
    stack_id = helpers.create(
        heat, "bm" + uuid.uuid4().hex[:6], _group("a", policy, count=3)
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(stack_id, template=_group("b", policy, count=3))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    # One member at a time (3 - 3 in service leaves room for none: 1).
    updated = _batches(_events(heat, stack_id, "UPDATE"))
    assert [b["members"] for b in updated] == [["0"], ["1"], ["2"]]
    assert _values(heat, stack_id) == ["b"] * 3
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
