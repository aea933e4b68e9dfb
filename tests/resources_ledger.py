"""Reading the OS::Heat::TestResource ledger of a deployment."""

import time

from heat_lite.resources import test_resource


def assert_no_leaks(deployment, timeout=10):
    """Every physical ID created was deleted (all stacks are gone)."""
    deadline = time.time() + timeout
    while True:
        created, deleted = test_resource.read_ledger(deployment.ledger)
        leaked = created - deleted
        if not leaked or time.time() > deadline:
            break
        time.sleep(0.2)
    assert not leaked, "leaked physical resources: %s" % sorted(leaked)
