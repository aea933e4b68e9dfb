"""Traversal planning: which record each resource converges on."""

import json

from heat_lite.engine import template as tmpl_mod
from heat_lite.engine.traversal import planner


def _defs(resources):
    tmpl = tmpl_mod.parse(
        {"heat_template_version": "2018-08-31", "resources": resources}
    )
    return tmpl.resources


def _record(
    rid,
    name,
    template_id=1,
    role="current",
    status="COMPLETE",
    action="CREATE",
    version=1,
    requires=(),
    replaces=None,
    replaced_by=None,
):
    return {
        "id": rid,
        "name": name,
        "template_id": template_id,
        "role": role,
        "status": status,
        "action": action,
        "version": version,
        "requires": json.dumps(list(requires)),
        "replaces": replaces,
        "replaced_by": replaced_by,
    }


NONE = {"type": "OS::Heat::None"}


def test_new_resources_get_init_records():
    plan = planner.TraversalPlanner("s", 7, _defs({"a": NONE}))
    chosen = plan.choose([])
    assert chosen.chosen == {}
    assert [r["name"] for r in chosen.inserts] == ["a"]
    assert chosen.inserts[0]["action"] == "INIT"
    assert chosen.inserts[0]["template_id"] == 7


def test_removed_resources_become_pending_delete():
    plan = planner.TraversalPlanner("s", 2, _defs({"a": NONE}))
    chosen = plan.choose([_record(1, "a"), _record(2, "b")])
    assert chosen.chosen == {"a": 1}
    assert chosen.updates == {2: {"role": "pending-delete"}}


def test_rollback_revives_the_replaced_record():
    # a@v1 (template 1) was replaced by a@v2 (template 2); rolling back
    # to template 1 picks v1 again and sends v2 to cleanup.
    records = [
        _record(1, "a", template_id=1, role="replaced", replaced_by=2),
        _record(2, "a", template_id=2, version=2, replaces=1),
    ]
    chosen = planner.TraversalPlanner("s", 1, _defs({"a": NONE})).choose(
        records
    )
    assert chosen.chosen == {"a": 1}
    assert chosen.updates[1] == {"role": "current", "replaced_by": None}
    assert chosen.updates[2] == {"role": "pending-delete"}


def test_failed_records_lose_to_healthy_ones():
    records = [
        _record(1, "a", role="replaced"),
        _record(2, "a", version=2, status="FAILED"),
    ]
    chosen = planner.TraversalPlanner("s", 9, _defs({"a": NONE})).choose(
        records
    )
    assert chosen.chosen == {"a": 1}


def test_records_being_deleted_are_never_chosen():
    records = [_record(1, "a", action="DELETE", status="IN_PROGRESS")]
    chosen = planner.TraversalPlanner("s", 9, _defs({"a": NONE})).choose(
        records
    )
    assert chosen.chosen == {}
    assert chosen.inserts[0]["version"] == 2


def test_update_graph_and_join():
    defs = _defs(
        {
            "a": NONE,
            "b": dict(NONE, depends_on="a"),
            "c": dict(NONE, depends_on="a"),
        }
    )
    built = planner.TraversalPlanner("s", 1, defs).build(
        {"a": 10, "b": 11, "c": 12}
    )
    assert built.graph["update"] == {"10": [11, 12], "11": [], "12": []}
    assert built.counts[(10, "update")] == 0
    assert built.counts[(11, "update")] == 1
    assert built.counts[(0, "barrier")] == 2  # b and c are roots
    assert built.leaves == [(10, "update")]


def test_empty_goal_goes_straight_to_cleanup():
    built = planner.TraversalPlanner("s", 1, {}).build({})
    assert built.leaves == [(0, "barrier")]
    assert built.counts == {(0, "barrier"): 0}


def test_cleanup_runs_in_reverse_and_replacements_first():
    records = [
        _record(1, "db"),
        _record(2, "web", requires=[1]),
        _record(3, "old", role="replaced", replaced_by=4),
        _record(4, "old", version=2, replaces=3),
    ]
    graph, counts = planner.plan_cleanup(records)
    assert graph["2"] == [1]  # web before db
    assert graph["4"] == [3]  # replacement before the replaced
    assert counts[(1, "cleanup")] == 1 and counts[(2, "cleanup")] == 0
    assert counts[(0, "stack")] == 2  # db and old@v1 finish last
    leaves = planner.cleanup_leaves(counts)
    assert sorted(leaves) == [(2, "cleanup"), (4, "cleanup")]


def test_cleanup_survives_cycles_across_versions():
    records = [_record(1, "a", requires=[2]), _record(2, "b", requires=[1])]
    graph, counts = planner.plan_cleanup(records)
    assert counts[(1, "cleanup")] == counts[(2, "cleanup")] == 0
    assert planner.cleanup_leaves(counts)


def test_adopt_prefills_new_records_with_the_data():
    adopt = {
        "a": {
            "resource_id": "phys-a",
            "resource_data": {"k": "v"},
            "metadata": {"m": 1},
        },
        "g": {
            "resource_id": "old-child",
            "resource_data": {},
            "resources": {"0": {"resource_id": "m0"}},
        },
    }
    plan = planner.TraversalPlanner(
        "s", 7, _defs({"a": NONE, "g": NONE, "new": NONE}), adopt=adopt
    )
    rows = {r["name"]: r for r in plan.choose([]).inserts}
    assert rows["a"]["physical_resource_id"] == "phys-a"
    assert json.loads(rows["a"]["rsrc_data"]) == {"k": "v"}
    assert json.loads(rows["a"]["rsrc_metadata"]) == {"m": 1}
    assert json.loads(rows["g"]["rsrc_data"]) == {
        planner.ADOPT_NESTED_KEY: {"0": {"resource_id": "m0"}}
    }
    # Not in the data: same columns (one insert), nothing to take over.
    assert rows["new"]["physical_resource_id"] is None
    assert set(rows["new"]) == set(rows["a"])
    assert all(
        "physical_resource_id" not in r
        for r in planner.TraversalPlanner("s", 7, _defs({"a": NONE}))
        .choose([])
        .inserts
    )


def test_history_rows_are_never_chosen_and_numbered_after():
    # a's only record is history (deleted, kept for /versions) and the
    # database leaves it out: a comes back as a new record, version 4.
    plan = planner.TraversalPlanner("s", 5, _defs({"a": NONE}))
    chosen = plan.choose([], lambda: {"a": 3})
    assert chosen.chosen == {}
    assert [(r["name"], r["version"]) for r in chosen.inserts] == [("a", 4)]


def test_history_versions_are_read_only_to_make_records():
    def unexpected():
        raise AssertionError("history read for nothing")

    plan = planner.TraversalPlanner("s", 5, _defs({"a": NONE}))
    chosen = plan.choose([_record(1, "a")], unexpected)
    assert chosen.chosen == {"a": 1} and chosen.inserts == []


def test_a_history_row_passed_in_is_not_revived():
    # Even made for the goal template, a history row is not a candidate.
    records = [_record(1, "a", template_id=5, role="history", action="DELETE")]
    chosen = planner.TraversalPlanner("s", 5, _defs({"a": NONE})).choose(
        records
    )
    assert chosen.chosen == {}
    assert chosen.inserts[0]["version"] == 2
    assert chosen.updates == {}
