"""A randomized storm of updates on one stack ends exactly on the last
template, with no leaked physical resource."""

import os
import random
import time

from harness import helpers
from tests.resources_ledger import assert_no_leaks

TR = "OS::Heat::TestResource"
POOL = ["n%d" % i for i in range(8)]


def random_template(rng, allow_failure=True):
    names = sorted(rng.sample(POOL, rng.randint(1, len(POOL))))
    resources = {}
    for i, name in enumerate(names):
        props = {
            "value": rng.choice(["a", "b", "c"]),
            "update_replace": rng.random() < 0.3,
            "wait_secs": rng.choice([0, 0, 0.1, 0.3]),
        }
        if rng.random() < 0.2:
            props["update_replace_value"] = rng.choice(["x", "y"])
        if allow_failure and rng.random() < 0.05:
            props["fail"] = True
        res = {"type": TR, "properties": props}
        earlier = names[:i]
        if earlier and rng.random() < 0.5:
            res["depends_on"] = sorted(
                rng.sample(earlier, rng.randint(1, min(2, len(earlier))))
            )
        resources[name] = res
    return helpers.template(resources)


def _versions(heat, stack_name, stack_id, name):
    """The resource's live versions (deleted ones kept as history are
    left out)."""
    resp = heat.http_client.get(
        "/stacks/%s/%s/resources/%s/versions" % (stack_name, stack_id, name)
    )
    return [v for v in resp.json()["versions"] if v["role"] != "history"]


def test_random_update_storm(deployment, heat):
    seed = int(os.environ.get("HEAT_LITE_TEST_SEED", time.time()))
    rng = random.Random(seed)
    stack_id = helpers.create(heat, "storm", random_template(rng, False))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    last = None
    for i in range(50):
        last = random_template(rng, allow_failure=i < 49)
        heat.stacks.update(stack_id, template=last)
        time.sleep(rng.choice([0, 0.02, 0.05, 0.1, 0.3]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=120)

    records = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(records) == set(last["resources"]), "seed %d" % seed
    physical = set()
    for name, defn in last["resources"].items():
        versions = _versions(heat, "storm", stack_id, name)
        assert [v["role"] for v in versions] == ["current"], (
            seed,
            name,
            versions,
        )
        props = versions[0]["properties"]
        for key, value in defn["properties"].items():
            assert props[key] == value, (seed, name, key)
        assert records[name].resource_status.endswith("_COMPLETE")
        physical.add(records[name].physical_resource_id)
    from heat_lite.resources import test_resource

    created, deleted = test_resource.read_ledger(deployment.ledger)
    stack_ids = {p for p in created if p.startswith("storm-")}
    alive = stack_ids - deleted
    assert alive == physical, "seed %d" % seed
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    assert events[-1].resource_status == "UPDATE_COMPLETE"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert_no_leaks(deployment)
