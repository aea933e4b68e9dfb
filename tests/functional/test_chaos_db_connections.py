"""Never strand a stack when the database refuses new connections.

The shared PostgreSQL of a busy site runs out of connection slots now and
then ("FATAL: sorry, too many clients already"): the engines stay alive
and their pooled connections keep working, but every new connection is
refused at connect time, at whatever step a worker happens to be. Here a
private login role owns the deployment's database and every process
connects as it; ``ALTER ROLE ... CONNECTION LIMIT`` below what the
engines' pools want gives exactly those refusals, for a few seconds at a
time, while client threads update stacks concurrently (some resources
updated in place, one replaced and one polled per update).

Every stack must then reach UPDATE_COMPLETE on exactly its newest
template within a bound, with the TestResource ledger clean (nothing
leaked, nothing created or deleted twice), and no engine may log a
traceback for the refusals (a known transient error).
"""

import collections
import json
import os
import threading
import time

import pytest
from heatclient import exc as heat_exc

from harness import backends, helpers, polling
from harness import deployment as deployment_mod
from tests.functional.test_chaos_engines import _query, _report, _retrying

TR = "OS::Heat::TestResource"
STACKS = 8
THREADS = 4
UPDATES = 6
# Connection slots left to the role while the fault lasts: fewer than
# the api and the two engine workers hold already, so every new
# connection (a pool overflow, a replaced connection) is refused.
LIMIT = 2
FAULT_SECONDS = 5
FAULTS = 3
# The watchdog's stall timeout is 10 s (deployment.py): a node left
# behind by the fault is re-driven well within this.
BOUND = 60
# Product-like liveness, so that the refusals (a few seconds) do not get
# the engines fenced: the fault is a live engine's.
EXTRA = """
[database]
max_pool_size = 2
max_overflow = 20

[engine]
engine_life_check_timeout = 10
"""


def _template(value):
    """A chain of OS::Heat::None updated in place, a TestResource
    replaced at every update and one updated in place by a polled
    action."""
    resources = {}
    for i in range(4):
        resources["n%d" % i] = {
            "type": "OS::Heat::None",
            "properties": {"v": value},
        }
        if i:
            resources["n%d" % i]["depends_on"] = "n%d" % (i - 1)
    resources["t"] = {
        "type": TR,
        "properties": {"update_replace_value": str(value)},
        "depends_on": "n1",
    }
    resources["u"] = {
        "type": TR,
        "properties": {"value": str(value), "wait_secs": 0.3},
        "depends_on": "t",
    }
    return helpers.template(resources)


@pytest.fixture
def limited(tmp_path):
    """A postgresql deployment whose processes connect as a private role;
    yields (deployment, set_limit)."""
    role, set_limit, drop_role = backends.create_pg_role()
    dep = deployment_mod.Deployment(
        "postgresql", tmp_path / "pg", extra_conf=EXTRA, db_owner=role
    )
    os.makedirs(dep.workdir, exist_ok=True)
    try:
        dep.start()
        yield dep, set_limit
    finally:
        set_limit(-1)
        dep.stop()
        drop_role()


def _update(heat, stack_id, value):
    # A 503: the API could not reach an engine or the database; a
    # client asks again.
    return polling.retrying(
        lambda: heat.stacks.update(stack_id, template=_template(value)),
        heat_exc.HTTPServiceUnavailable,
        60,
    )


def _current_records(dep, stack_id):
    rows = _query(
        dep,
        "SELECT name, properties_data, physical_resource_id, type FROM "
        "resource WHERE stack_id = '%s' AND role = 'current'" % stack_id,
    )
    return rows


def test_connection_refusals_during_concurrent_updates(limited):
    dep, set_limit = limited
    heat = dep.client()
    stacks = [
        helpers.create(heat, "conns%d" % i, _template(0))
        for i in range(STACKS)
    ]
    for stack_id in stacks:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    newest = {stack_id: 0 for stack_id in stacks}
    errors = []

    def client(mine):
        try:
            for value in range(1, UPDATES + 1):
                for stack_id in mine:
                    _update(heat, stack_id, value)
                    newest[stack_id] = value
                time.sleep(0.5)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=client, args=(stacks[i::THREADS],))
        for i in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    try:
        for _ in range(FAULTS):
            time.sleep(2)
            set_limit(LIMIT)
            time.sleep(FAULT_SECONDS)
            set_limit(-1)
    finally:
        set_limit(-1)
        for thread in threads:
            thread.join(timeout=300)
    fault_end = time.time()
    assert not errors, errors
    stuck = {}
    for stack_id in stacks:
        try:
            _retrying(
                lambda s=stack_id: helpers.wait_for_status(
                    heat,
                    s,
                    "UPDATE_COMPLETE",
                    timeout=max(1, BOUND - (time.time() - fault_end)),
                )
            )
        except AssertionError as exc:
            stuck[stack_id] = str(exc)
    assert not stuck, "stacks not converged %ss after the fault: %s" % (
        BOUND,
        stuck,
    )
    _report(
        "connection_refusals_during_updates",
        "postgresql",
        "connection limit %d x%d" % (LIMIT, FAULTS),
        time.time() - fault_end,
    )
    # Exactly the newest template, one current record per resource.
    goal = _template(UPDATES)["resources"]
    tr_current = set()
    for stack_id in stacks:
        assert newest[stack_id] == UPDATES
        rows = _current_records(dep, stack_id)
        names = collections.Counter(r.name for r in rows)
        assert names == collections.Counter(list(goal)), (stack_id, names)
        for row in rows:
            stored = json.loads(row.properties_data or "{}")
            wanted = goal[row.name]["properties"]
            assert {k: stored.get(k) for k in wanted} == wanted, (
                stack_id,
                row.name,
                stored,
            )
            if row.type == TR:
                tr_current.add(row.physical_resource_id)
    # The ledger: what lives is what the stacks own; each record created
    # once (one physical ID per record uuid), nothing deleted twice.
    creates, deletes = collections.Counter(), collections.Counter()
    with open(dep.ledger) as f:
        for line in f:
            event, _, physical_id = line.strip().partition(" ")
            (creates if event == "create" else deletes)[physical_id] += 1
    assert set(creates) - set(deletes) == tr_current
    assert not [p for p, n in deletes.items() if n > 1]
    per_record = collections.Counter(p.rsplit("-", 1)[0] for p in creates)
    assert not [r for r, n in per_record.items() if n > 1], per_record
    # A refused connection is a known transient error: a warning, never
    # a traceback.
    with open(os.path.join(dep.workdir, "engine.log"), errors="replace") as f:
        log = f.read()
    assert "Traceback" not in log, log[log.index("Traceback") - 2000 :][:6000]
