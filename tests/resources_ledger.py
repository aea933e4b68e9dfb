"""Reading the OS::Heat::TestResource ledger of a deployment."""

import collections
import os

from harness import polling
from heat_lite.resources import test_resource


def assert_no_leaks(deployment, timeout=10):
    """Every physical ID created was deleted (all stacks are gone)."""

    def leaked():
        created, deleted = test_resource.read_ledger(deployment.ledger)
        return created - deleted

    polling.until(
        lambda: not leaked(),
        timeout,
        lambda: "no leaked physical resources (%s)" % sorted(leaked()),
        interval=0.2,
    )


def ledger_counts(deployment):
    """(creates, deletes): Counters of physical IDs in the ledger."""
    creates, deletes = collections.Counter(), collections.Counter()
    if os.path.exists(deployment.ledger):
        with open(deployment.ledger) as f:
            for line in f:
                event, _, physical_id = line.strip().partition(" ")
                (creates if event == "create" else deletes)[physical_id] += 1
    return creates, deletes


def assert_one_each(deployment, heat, stack_ids, exact_creates=True):
    """COMPLETE stacks of TestResources own exactly one live physical
    resource per resource: none leaked, none doubled, none deleted twice.

    :param stack_ids: one stack id or a list: every stack of the
        deployment that has TestResources.
    :param exact_creates: also require one create per resource (no action
        was run twice); False where a takeover legitimately replaces.
    """
    if isinstance(stack_ids, str):
        stack_ids = [stack_ids]
    current = {
        r.physical_resource_id
        for stack_id in stack_ids
        for r in heat.resources.list(stack_id)
    }
    creates, deletes = ledger_counts(deployment)
    live = set(creates) - set(deletes)
    assert live == current, "live %s, stacks own %s" % (
        sorted(live),
        sorted(current),
    )
    twice = sorted(i for i, n in deletes.items() if n > 1)
    assert not twice, "deleted more than once: %s" % twice
    if exact_creates:
        assert len(creates) == len(current), "%d creates for %d resources" % (
            len(creates),
            len(current),
        )
