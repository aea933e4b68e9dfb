"""Keeping the database small and the history inspectable (issue 11
parts 4 and 8, issue 12 part 7), on SQLite, PostgreSQL and MariaDB:

* a resource being deleted stays in ``openstack stack resource list``
  with its DELETE_IN_PROGRESS status;
* deleted record versions stay as history (``/versions``), up to
  ``[engine] max_record_versions`` per resource;
* ``max_events_per_stack`` caps a stack's events;
* ``heat-lite-manage purge_deleted`` hard-deletes soft-deleted stacks and
  what is nested in them, never a live stack's rows.
"""

import datetime
import json
import subprocess

import pytest
import sqlalchemy as sa

from harness import deployment as deployment_mod
from harness import helpers, osc, polling
from heat_lite.db import models

TR = "OS::Heat::TestResource"
MAX_EVENTS, EVENT_BATCH, MAX_VERSIONS = 40, 10, 3
EXTRA = """
[DEFAULT]
max_events_per_stack = %d
event_purge_batch_size = %d

[engine]
max_record_versions = %d
""" % (MAX_EVENTS, EVENT_BATCH, MAX_VERSIONS)
TABLES = ("resource", "event", "sync_point", "traversal", "raw_template")


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def dep(request, tmp_path_factory):
    yield from deployment_mod.running(
        request.param,
        tmp_path_factory.mktemp("purge-" + request.param),
        extra_conf=EXTRA,
    )


@pytest.fixture
def heat(dep):
    return dep.client()


def _osc_json(dep, *args):
    cmd = [
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint("demo"),
        *args,
        "-f",
        "json",
    ]
    result = osc.run(cmd, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _db_url(dep):
    with open(dep.config) as f:
        for line in f:
            if line.startswith("connection = "):
                return line.split(" = ", 1)[1].strip()
    raise AssertionError("no connection in config")


def _sql(dep, statement, **params):
    engine = sa.create_engine(_db_url(dep))
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement), params)
            return result.all() if result.returns_rows else None
    finally:
        engine.dispose()


def _rows_of(dep, stack_ids):
    """{table: rows} belonging to ``stack_ids``, the stack rows too."""
    return {
        table: _count(
            dep, table, "id" if table == "stack" else "stack_id", stack_ids
        )
        for table in TABLES + ("stack",)
    }


def _count(dep, table, column, ids):
    engine = sa.create_engine(_db_url(dep))
    try:
        with engine.connect() as conn:
            query = sa.text(
                "SELECT count(*) FROM %s WHERE %s IN :ids" % (table, column)
            ).bindparams(sa.bindparam("ids", expanding=True))
            return conn.execute(query, {"ids": list(ids)}).scalar()
    finally:
        engine.dispose()


def _versions(heat, stack_id, name):
    stack = heat.stacks.get(stack_id, resolve_outputs=False)
    resp = heat.http_client.get(
        "/stacks/%s/%s/resources/%s/versions"
        % (stack.stack_name, stack_id, name)
    )
    return resp.json()["versions"]


# 11.4 ----------------------------------------------------------------------
def _held(name):
    """A TestResource whose actions wait while the hold file ``name``
    exists (``holding``): the test looks at a delete in progress for as
    long as a CLI call takes on a busy machine, with no timer to race."""
    return {"type": TR, "properties": {"value": "v", "hold": name}}


def holding(dep, name):
    return helpers.holding(dep.ledger, name)


def _listed(heat, stack_id):
    """{name: status} of ``resource list``; fails once the stack's
    operation is over (the moment to look at has passed)."""
    states = {
        r.resource_name: r.resource_status
        for r in heat.resources.list(stack_id)
    }
    status = heat.stacks.get(stack_id, resolve_outputs=False).stack_status
    assert status.endswith("IN_PROGRESS"), (status, states)
    return states


def _cli_listed(dep, stack_id):
    rows = _osc_json(dep, "stack", "resource", "list", stack_id)
    return {r["resource_name"]: r["resource_status"] for r in rows}


def test_resources_being_deleted_stay_listed(dep, heat):
    tmpl = helpers.template({"keep": {"type": TR}, "gone": _held("gone")})
    stack_id = helpers.create(heat, "listdel", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")

    # Removing a resource: it is listed (and shown) while deleted.
    with holding(dep, "gone"):
        heat.stacks.update(
            stack_id, template=helpers.template({"keep": {"type": TR}})
        )
        polling.until(
            lambda: (
                _listed(heat, stack_id).get("gone") == "DELETE_IN_PROGRESS"
            ),
            what="gone DELETE_IN_PROGRESS",
            timeout=60,
        )
        shown = heat.resources.get(stack_id, "gone")
        assert shown.resource_status == "DELETE_IN_PROGRESS"
        states = _cli_listed(dep, stack_id)
        assert states["gone"] == "DELETE_IN_PROGRESS", states
        assert states["keep"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE")
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert [r.resource_name for r in heat.resources.list(stack_id)] == ["keep"]
    assert [v["role"] for v in _versions(heat, stack_id, "gone")] == [
        "history"
    ]

    # Deleting the stack: the list never comes back empty while it runs.
    heat.stacks.update(
        stack_id,
        template=helpers.template(
            {"keep": _held("stack"), "other": _held("stack")}
        ),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    with holding(dep, "stack"):
        heat.stacks.delete(stack_id)
        polling.until(
            lambda: "DELETE_IN_PROGRESS" in _listed(heat, stack_id).values(),
            what="DELETE_IN_PROGRESS in the list",
            timeout=60,
        )
        states = _cli_listed(dep, stack_id)
        assert set(states) == {"keep", "other"}, states
        assert "DELETE_IN_PROGRESS" in states.values()
        assert heat.stacks.get(stack_id).stack_status == "DELETE_IN_PROGRESS"
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


# 12.7 ----------------------------------------------------------------------
def test_replaced_versions_are_kept_as_history(dep, heat):
    def tmpl(value):
        return helpers.template(
            {
                "a": {
                    "type": TR,
                    "properties": {"update_replace_value": value},
                },
                "b": {
                    "type": TR,
                    "properties": {"value": {"get_resource": "a"}},
                },
            }
        )

    stack_id = helpers.create(heat, "history", tmpl("v1"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    physical = [heat.resources.get(stack_id, "a").physical_resource_id]
    for value in ("v2", "v3", "v4"):
        heat.stacks.update(stack_id, template=tmpl(value))
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
        physical.append(heat.resources.get(stack_id, "a").physical_resource_id)
    assert len(set(physical)) == 4

    versions = _versions(heat, stack_id, "a")
    # max_record_versions = 3: the live one and the two newest deleted.
    assert [v["version"] for v in versions] == [2, 3, 4]
    assert [v["role"] for v in versions] == ["history", "history", "current"]
    assert [v["physical_resource_id"] for v in versions] == physical[1:]
    assert [v["resource_status"] for v in versions] == [
        "DELETE_COMPLETE",
        "DELETE_COMPLETE",
        "CREATE_COMPLETE",
    ]
    assert [v["properties"]["update_replace_value"] for v in versions] == [
        "v2",
        "v3",
        "v4",
    ]
    assert len({v["template_id"] for v in versions}) == 3
    assert all(v["creation_time"] and v["updated_time"] for v in versions)
    assert versions[1]["replaces"] is not None

    # History is never listed or shown as live, nor revived.
    listed = heat.resources.list(stack_id)
    assert sorted(r.resource_name for r in listed) == ["a", "b"]
    assert (
        heat.resources.get(stack_id, "a").physical_resource_id == physical[-1]
    )

    # A failed replacement rolls back onto the live version as before.
    stack = heat.stacks.get(stack_id)
    failing = tmpl("v5")
    failing["resources"]["a"]["properties"]["fail"] = True
    heat.stacks.update(stack_id, template=failing, disable_rollback=False)
    helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE")
    assert (
        heat.resources.get(stack_id, "a").physical_resource_id == physical[-1]
    )
    roles = [v["role"] for v in _versions(heat, stack_id, "a")]
    assert roles.count("current") == 1 and len(roles) <= MAX_VERSIONS
    assert stack.stack_name == "history"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_removed_and_readded_resource_gets_a_new_version(dep, heat):
    stack_id = helpers.create(
        heat, "readd", helpers.template({"a": {"type": TR}, "b": {"type": TR}})
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(
        stack_id, template=helpers.template({"a": {"type": TR}})
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    heat.stacks.update(
        stack_id,
        template=helpers.template({"a": {"type": TR}, "b": {"type": TR}}),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    versions = _versions(heat, stack_id, "b")
    assert [(v["version"], v["role"]) for v in versions] == [
        (1, "history"),
        (2, "current"),
    ]
    assert versions[1]["resource_status"] == "CREATE_COMPLETE"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


# 11.8 ----------------------------------------------------------------------
def test_events_are_capped_per_stack(dep, heat):
    def tmpl(value):
        return helpers.flat(4, TR, value=value)

    stack_id = helpers.create(heat, "events", tmpl("0"))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    for i in range(1, 6):
        heat.stacks.update(stack_id, template=tmpl(str(i)))
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    # 6 operations x (2 stack + 4 x 2 resource events) = 60 written.
    events = list(heat.events.list(stack_id, sort_dir="asc"))
    assert MAX_EVENTS - EVENT_BATCH < len(events) <= MAX_EVENTS
    assert (
        events[-1].resource_status_reason
        == "Stack UPDATE completed successfully"
    )
    # The oldest went: the create's events are gone.
    assert "Stack CREATE started" not in {
        e.resource_status_reason for e in events
    }
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def _group(count):
    return {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": count, "resource_def": {"type": TR}},
    }


def _nested_ids(dep, parent_ids):
    rows = _sql(
        dep,
        "SELECT id FROM stack WHERE owner_id IN ('%s')"
        % "','".join(parent_ids),
    )
    return [r[0] for r in rows]


def _insert_dead_service(dep):
    old = datetime.datetime(2020, 1, 1)
    engine = sa.create_engine(_db_url(dep))
    try:
        with engine.begin() as conn:
            conn.execute(
                models.Service.__table__.insert().values(
                    engine_id="dead-engine",
                    host="h",
                    hostname="h",
                    binary="heat-lite-engine",
                    topic="t",
                    pid=1,
                    report_interval=1.0,
                    created_at=old,
                    updated_at=old,
                    deleted_at=old,
                )
            )
    finally:
        engine.dispose()


def _manage(dep, *args):
    return subprocess.run(
        [
            deployment_mod.command("heat-lite-manage"),
            "--config-file",
            dep.config,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_purge_deleted(dep, heat):
    live = helpers.create(
        heat,
        "purge-live",
        helpers.template({"a": {"type": TR}, "g": _group(2)}),
    )
    dead = helpers.create(
        heat,
        "purge-dead",
        helpers.template({"a": {"type": TR}, "g": _group(2)}),
    )
    helpers.wait_for_status(heat, live, "CREATE_COMPLETE")
    helpers.wait_for_status(heat, dead, "CREATE_COMPLETE")
    dead_nested = _nested_ids(dep, [dead])
    live_nested = _nested_ids(dep, [live])
    assert len(dead_nested) == 1 and len(live_nested) == 1
    # The live stack drops its group: that nested stack is deleted, the
    # live stack's own rows are not.
    heat.stacks.update(live, template=helpers.template({"a": {"type": TR}}))
    helpers.wait_for_status(heat, live, "UPDATE_COMPLETE")
    heat.stacks.delete(dead)
    helpers.wait_for_status(heat, dead, "DELETE_COMPLETE")
    _insert_dead_service(dep)
    before_live = _rows_of(dep, [live])
    # The deleted stack's records stay as history until the purge.
    path = "/stacks/purge-dead/%s/resources/a/versions" % dead
    history = heat.http_client.get(path).json()["versions"]
    assert [(v["role"], v["resource_status"]) for v in history] == [
        ("history", "DELETE_COMPLETE")
    ]
    assert list(heat.resources.list(dead)) == []

    # Heat's spelling, default age 90 days: nothing is old enough.
    result = _manage(dep, "purge_deleted", "-g", "days", "-b", "5")
    assert result.returncode == 0, result.stderr
    assert _rows_of(dep, [dead] + dead_nested)["stack"] == 2
    assert "0 stacks" in result.stdout and "1 services" in result.stdout

    # The issue's spelling, age 0 minutes: the deleted ones go.
    result = _manage(
        dep,
        "purge_deleted",
        "--age",
        "0",
        "--granularity",
        "minutes",
        "--batch-size",
        "1",
    )
    assert result.returncode == 0, result.stderr
    assert "nested" in result.stdout
    gone = _rows_of(dep, [dead] + dead_nested + live_nested)
    assert gone == {t: 0 for t in TABLES + ("stack",)}, gone
    after_live = _rows_of(dep, [live])
    assert after_live["stack"] == 1
    assert after_live["resource"] == before_live["resource"] >= 1
    assert after_live["event"] == before_live["event"] > 0
    assert after_live["raw_template"] == before_live["raw_template"] >= 1
    assert helpers.http_error(lambda: heat.stacks.get(dead)).code == 404
    assert helpers.http_error(lambda: heat.http_client.get(path)).code == 404
    heat.stacks.update(
        live,
        template=helpers.template(
            {"a": {"type": TR, "properties": {"value": "again"}}}
        ),
    )
    helpers.wait_for_status(heat, live, "UPDATE_COMPLETE")

    # Heat's positional age and -p: only that project's stacks.
    result = _manage(dep, "purge_deleted", "-g", "seconds", "-p", "other", "0")
    assert result.returncode == 0 and "0 stacks" in result.stdout
    bad = _manage(dep, "purge_deleted", "-b", "0")
    assert bad.returncode == 1 and "batch_size" in bad.stderr
    heat.stacks.delete(live)
    helpers.wait_for_status(heat, live, "DELETE_COMPLETE")
