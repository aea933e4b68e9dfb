"""A ResourceGroup of hundreds of members on PostgreSQL over RabbitMQ
(API + two engine processes): create 500, scale to 800, down to 100,
delete, with nothing leaked. Each phase's seconds are printed (-s)."""

import time
import uuid

import pytest

from harness import deployment as deployment_mod
from harness import helpers
from tests.resources_ledger import assert_no_leaks

# Generous: a phase takes a few seconds to tens of seconds on two
# shared cores; past this something is quadratic again.
PHASE_BUDGET = 240


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    yield from deployment_mod.running(
        "postgresql", tmp_path_factory.mktemp("scale")
    )


def _group(count):
    return helpers.template(
        {
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": count,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": "m-%index%"},
                    },
                },
            }
        },
        outputs={
            "refs": {"value": {"get_attr": ["g", "refs"]}},
            "last": {
                "value": {
                    "get_attr": ["g", "resource.%d.output" % (count - 1)]
                }
            },
        },
    )


def _outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def _phase(timings, name, call):
    start = time.monotonic()
    call()
    timings[name] = round(time.monotonic() - start, 1)
    assert timings[name] < PHASE_BUDGET, timings


def test_group_of_hundreds_scales(pg):
    heat = pg.client()
    timings = {}
    name = "scale" + uuid.uuid4().hex[:6]
    stack_id = None

    def create():
        nonlocal stack_id
        stack_id = helpers.create(heat, name, _group(500))
        helpers.wait_for_status(
            heat, stack_id, "CREATE_COMPLETE", timeout=PHASE_BUDGET
        )

    def scale(count):
        heat.stacks.update(stack_id, template=_group(count))
        helpers.wait_for_status(
            heat, stack_id, "UPDATE_COMPLETE", timeout=PHASE_BUDGET
        )

    _phase(timings, "create 500", create)
    outputs = _outputs(heat, stack_id)
    assert len(outputs["refs"]) == 500
    assert outputs["last"] == "m-499"
    child_id = heat.resources.get(stack_id, "g").physical_resource_id

    _phase(timings, "scale 500->800", lambda: scale(800))
    outputs = _outputs(heat, stack_id)
    assert len(set(outputs["refs"])) == 800
    assert outputs["last"] == "m-799"

    _phase(timings, "scale 800->100", lambda: scale(100))
    outputs = _outputs(heat, stack_id)
    assert len(outputs["refs"]) == 100
    assert heat.resources.get(stack_id, "g").physical_resource_id == child_id
    names = {r.resource_name for r in heat.resources.list(child_id)}
    assert names == {str(i) for i in range(100)}

    def delete():
        heat.stacks.delete(stack_id)
        helpers.wait_for_status(
            heat, stack_id, "DELETE_COMPLETE", timeout=PHASE_BUDGET
        )

    _phase(timings, "delete 100", delete)
    assert_no_leaks(pg)
    print("ResourceGroup scale timings (s):", timings)
