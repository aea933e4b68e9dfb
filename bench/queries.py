"""The ``stack_query`` scenario: ``POST /stacks/query`` over K stacks.

Creating 10,000 stacks through the API would take most of an hour on a
small machine and measure the engine, not the query; so the K stacks
(``--query-stacks``, 10 resources each, a quarter of them tagged ``php``
and on PHP 5.4) are written straight into heat_lite's database, as the
engine leaves them: a live stack, its template and environment, current
COMPLETE records with resolved properties. Each selector is then sent
over the REST API three times; the median time and the costs of one
call (SQL statements, CPU of the API and engine processes) are recorded
with the number of stacks as N.
"""

import json
import statistics
import time
import uuid

import sqlalchemy as sa

from bench import api
from heat_lite.db import models

RESOURCES = 10
SELECTORS = {
    # The database narrows by name: few candidates.
    "by_name": {"stack_name": "app-00012*"},
    # Name and tags narrow in SQL, parameters and resources in Python.
    "fleet": {
        "stack_name": "app-*",
        "tags": ["php"],
        "parameters": {"php_version": "5.4.*"},
        "resources": [
            {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "php-5.4*"},
            }
        ],
        "status": ["CREATE_COMPLETE", "UPDATE_COMPLETE"],
    },
    # Nothing narrows in SQL: every stack's environment is read.
    "parameters_only": {"parameters": {"php_version": "5.4.*"}},
}


def _db_url(deployment):
    with open(deployment.config) as f:
        for line in f:
            if line.startswith("connection = "):
                return line.split(" = ", 1)[1].strip()
    raise RuntimeError("no [database] connection in %s" % deployment.config)


def template():
    """The template of every seeded stack (10 TestResource on the
    ``php_version`` parameter)."""
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"php_version": {"type": "string"}},
        "resources": {
            "r%d" % i: {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "php_version"}},
            }
            for i in range(RESOURCES)
        },
    }


def _php(i):
    return "5.4.%d" % (i % 50) if i % 4 == 0 else "5.5.%d" % (i % 50)


def _stack(i, stack_id, tenant, template_id, now):
    name = "app-%06d" % i
    return {
        "id": stack_id,
        "name": name,
        "live_name": name,
        "tenant": tenant,
        "raw_template_id": template_id,
        "prev_raw_template_id": template_id,
        "action": "CREATE",
        "status": "COMPLETE",
        "status_reason": "Stack CREATE completed successfully",
        "current_traversal": str(uuid.uuid4()),
        "disable_rollback": True,
        "tags": json.dumps(["php", "web"] if i % 4 == 0 else ["web"]),
        "created_at": now,
        "action_started_at": now,
        "nested_depth": 0,
    }


def _resources(i, stack_id, template_id, now):
    return [
        {
            "uuid": str(uuid.uuid4()),
            "stack_id": stack_id,
            "name": "r%d" % r,
            "version": 1,
            "role": "current",
            "type": "OS::Heat::TestResource",
            "physical_resource_id": "app-%06d-r%d" % (i, r),
            "action": "CREATE",
            "status": "COMPLETE",
            "status_reason": "state changed",
            "template_id": template_id,
            "properties_data": json.dumps(
                {"value": "php-" + _php(i), "fail": False, "wait_secs": 0}
            ),
            "atomic_key": 1,
            "created_at": now,
        }
        for r in range(RESOURCES)
    ]


def seed(deployment, stacks, tenant="demo"):
    """Write ``stacks`` stacks into the deployment's database."""
    engine = sa.create_engine(_db_url(deployment))
    now = models.utcnow()
    text = json.dumps(template())
    raw = models.RawTemplate.__table__
    try:
        with engine.begin() as conn:
            for start in range(0, stacks, 500):
                ids = range(start, min(start + 500, stacks))
                stack_rows, resource_rows = [], []
                for i in ids:
                    stack_id = str(uuid.uuid4())
                    env = {"parameters": {"php_version": _php(i)}}
                    template_id = conn.execute(
                        raw.insert().values(
                            stack_id=stack_id,
                            template=text,
                            environment=json.dumps(env),
                            files="{}",
                            created_at=now,
                        )
                    ).inserted_primary_key[0]
                    stack_rows.append(
                        _stack(i, stack_id, tenant, template_id, now)
                    )
                    resource_rows += _resources(i, stack_id, template_id, now)
                conn.execute(models.Stack.__table__.insert(), stack_rows)
                conn.execute(models.Resource.__table__.insert(), resource_rows)
    finally:
        engine.dispose()


def run_query(topo, results, stacks):
    """Seed ``stacks`` stacks, then time every selector."""
    started = time.monotonic()
    seed(topo.deployment, stacks)
    seeding = time.monotonic() - started
    topo.forget()
    client = topo.client
    for name, selector in SELECTORS.items():
        times = []
        found = None

        def _one(selector=selector):
            nonlocal found
            start = time.monotonic()
            resp = client._request(
                "POST", "/stacks/query", {"selector": selector}
            )
            found = len(resp.json()["stacks"])
            return time.monotonic() - start

        try:
            seconds, costs = topo.measure(_one)
            times = [seconds] + [_one() for _ in range(2)]
        except (api.OpFailed, api.OpTimeout) as exc:
            results.add(
                topo.name,
                "stack_query",
                name,
                stacks,
                "failed",
                reason=str(exc),
            )
            continue
        results.add(
            topo.name,
            "stack_query",
            name,
            stacks,
            seconds=statistics.median(times),
            costs=costs,
            matched=found,
            seed_seconds=round(seeding, 1),
        )
