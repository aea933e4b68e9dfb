"""What one drift detection costs the database, pinned per resource and
per stack of the tree, on SQLite, PostgreSQL and MariaDB.

The detection (``engine.drift.detect.Detector.run``) runs in the test's
thread on an in-process engine's database and every statement and
commit it makes is counted (``test_step_costs.Counter``), for stacks of
N and 2N resources of types whose state is their record (no cloud
request: what is left is the database's share), flat and as the members
of a ResourceGroup (one nested stack). The cloud requests per resource
are tests/functional/test_cloud_drift.py's; the figures are in
doc/bench/drift.md.
"""

import uuid

import pytest

from harness import inprocess, polling
from heat_lite.common import context
from heat_lite.db import drift as db_drift
from heat_lite.db import session
from heat_lite.engine.drift import detect
from heat_lite.engine.endpoint import service
from tests.unit.engine.test_step_costs import Counter

CTXT = context.RequestContext(project_id="p", user_id="u")
N = 5
# (statements, commits): per resource (whatever its type or depth): none,
# a resource's template and definition are the engine's cached ones; per
# detection of a flat stack: the stack, its children, the previous
# report, its records, the report written (one commit); each nested
# stack adds its children and its records.
PER_RESOURCE = (0, 0)
PER_STACK = {"flat": (5, 1), "nested": (7, 1)}


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def engine(request, tmp_path_factory):
    with inprocess.engine_process(
        request.param, tmp_path_factory.mktemp("drift-costs")
    ) as proc:
        yield proc


def _template(n, nested):
    kinds = ["OS::Heat::None", "OS::Heat::RandomString", "OS::Heat::Value"]
    if nested:
        resources = {
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": n,
                    "resource_def": {"type": "OS::Heat::None"},
                },
            }
        }
    else:
        resources = {
            "r%d" % i: {
                "type": kinds[i % len(kinds)],
                "properties": {"value": i} if i % 3 == 2 else {},
            }
            for i in range(n)
        }
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _detection(proc, n, nested):
    """(statements, commits, report) of one detection of a new stack."""
    ident = service.EngineService(proc.ops, proc.services).create_stack(
        CTXT,
        "d" + uuid.uuid4().hex[:8],
        _template(n, nested),
        {},
        {},
        None,
        None,
        {},
    )
    stack_id = ident["stack_id"]
    polling.stack_reaches(stack_id, "CREATE_COMPLETE")
    detector = detect.Detector(proc.services)
    # A first detection fills what later ones find cached.
    for _ in range(2):
        detection = str(uuid.uuid4())
        assert db_drift.drift_start(stack_id, "p", detection, 600)
        with Counter(session.get_engine()) as counter:
            counter.call(detector.run, stack_id, detection)
    report = db_drift.drift_get(stack_id)["report"]
    return counter.statements, counter.commits, report


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_detection_costs(engine, nested):
    few = _detection(engine, N, nested)
    many = _detection(engine, 2 * N, nested)
    assert len(many[2]) - len(few[2]) == N
    assert {e["drift_status"] for e in many[2]} == {"IN_SYNC"}
    per_resource = ((many[0] - few[0]) / N, (many[1] - few[1]) / N)
    assert per_resource == PER_RESOURCE
    assert few[:2] == PER_STACK["nested" if nested else "flat"]
