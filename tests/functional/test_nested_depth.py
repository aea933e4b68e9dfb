"""``nested_depth`` on resource and event lists: the resources and events
of nested stacks (a template resource holding a ResourceGroup, and a
ResourceGroup of template resources: two levels each), with Heat's
``parent_resource`` and ``nested``/``stack``/``root_stack`` links."""

import json

import pytest
import yaml

from harness import helpers, osc
from tests.resources_ledger import assert_no_leaks

OUTER = yaml.safe_dump(
    {
        "heat_template_version": "2018-08-31",
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {"type": "OS::Heat::TestResource"},
                },
            }
        },
    }
)
INNER = yaml.safe_dump(
    {
        "heat_template_version": "2018-08-31",
        "resources": {"leaf": {"type": "OS::Heat::TestResource"}},
    }
)
FILES = {"outer.yaml": OUTER, "inner.yaml": INNER}
TEMPLATE = helpers.template(
    {
        "top": {"type": "OS::Heat::None"},
        "outer": {"type": "outer.yaml"},
        "grp": {
            "type": "OS::Heat::ResourceGroup",
            "properties": {"count": 1, "resource_def": {"type": "inner.yaml"}},
        },
    }
)


def _links(item):
    return {link["rel"]: link["href"] for link in item.links}


@pytest.fixture
def make_stack(deployment, heat):
    """Create the two-level stack; delete it (and check for leaks) after
    the test, so a failed assertion does not leave it to later tests."""
    made = []

    def make(name):
        stack_id = helpers.create(heat, name, TEMPLATE, files=FILES)
        made.append(stack_id)
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
        return stack_id

    yield make
    for stack_id in made:
        heat.stacks.delete(stack_id)
        helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert_no_leaks(deployment)


def _children(heat, parent_id):
    return {
        s.id: s
        for s in heat.stacks.list(show_nested=True)
        if s.parent == parent_id
    }


def test_resource_list_nested_depth(heat, make_stack):
    stack_id = make_stack("deep")
    top = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert sorted(top) == ["grp", "outer", "top"]
    children = _children(heat, stack_id)
    outer_id = top["outer"].physical_resource_id
    assert outer_id in children
    assert _links(top["outer"])["nested"].endswith(
        "/stacks/%s/%s" % (children[outer_id].stack_name, outer_id)
    )
    assert "nested" not in _links(top["top"])
    assert all(not hasattr(r, "parent_resource") for r in top.values())

    one = heat.resources.list(stack_id, nested_depth=1)
    by_parent = {}
    for r in one:
        by_parent.setdefault(getattr(r, "parent_resource", None), set()).add(
            r.resource_name
        )
    assert by_parent == {
        None: {"top", "outer", "grp"},
        "outer": {"group"},
        "grp": {"0"},
    }
    group = [r for r in one if r.resource_name == "group"][0]
    assert group.stack_name == children[outer_id].stack_name
    assert _links(group)["stack"].endswith(outer_id)
    assert "nested" in _links(group)
    # Listed directly, a nested stack's resources name their parent too.
    direct = heat.resources.list(outer_id)
    assert [(r.resource_name, r.parent_resource) for r in direct] == [
        ("group", "outer")
    ]
    assert heat.resources.get(outer_id, "group").parent_resource == "outer"

    two = heat.resources.list(stack_id, nested_depth=2)
    names = sorted(r.resource_name for r in two)
    assert names == ["0", "0", "1", "group", "grp", "leaf", "outer", "top"]
    leaf = [r for r in two if r.resource_name == "leaf"][0]
    assert leaf.parent_resource == "0"
    assert leaf.resource_status == "CREATE_COMPLETE"
    # Filters apply at every level; deeper than the tree is harmless.
    only = heat.resources.list(
        stack_id, nested_depth=5, filters={"type": "OS::Heat::TestResource"}
    )
    assert sorted(r.resource_name for r in only) == ["0", "1", "leaf"]


def test_event_list_nested_depth(heat, make_stack):
    stack_id = make_stack("deepev")
    own = heat.events.list(stack_id)
    assert {e.resource_name for e in own} == {"deepev", "top", "outer", "grp"}
    assert all("root_stack" not in _links(e) for e in own)
    events = heat.events.list(stack_id, nested_depth=2)
    names = {e.resource_name for e in events}
    assert {"leaf", "group", "0", "1"} <= names
    top_url = _links(own[0])["stack"]
    assert all(_links(e)["root_stack"] == top_url for e in events)
    leaf = [e for e in events if e.resource_name == "leaf"]
    assert leaf and all(_links(e)["stack"] != top_url for e in leaf)
    shallow = {
        e.resource_name for e in heat.events.list(stack_id, nested_depth=1)
    }
    assert "group" in shallow and "leaf" not in shallow
    # Resource-scoped: that name in the stack and its nested stacks.
    scoped = heat.events.list(stack_id, resource_name="leaf", nested_depth=2)
    assert scoped and {e.resource_name for e in scoped} == {"leaf"}
    # Paging with a marker runs across the whole tree.
    page = heat.events.list(stack_id, nested_depth=2, limit=3, sort_dir="asc")
    rest = heat.events.list(
        stack_id, nested_depth=2, sort_dir="asc", marker=page[-1].id
    )
    assert len(page) + len(rest) == len(events)


def test_openstack_cli_nested_depth(deployment, make_stack):
    if deployment.kind != "sqlite":
        pytest.skip("the CLI path is the same on every backend")
    make_stack("deepcli")
    cli = [
        "--os-auth-type",
        "none",
        "--os-endpoint",
        deployment.endpoint(),
    ]

    def run(*args):
        result = osc.run(cli + list(args), timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    rows = json.loads(
        run(
            "stack",
            "resource",
            "list",
            "--nested-depth",
            "2",
            "deepcli",
            "-f",
            "json",
        )
    )
    assert "leaf" in {r["resource_name"] for r in rows}
    assert any(r["stack_name"].startswith("deepcli-") for r in rows)
    out = run("stack", "event", "list", "--nested-depth", "2", "deepcli")
    assert "leaf" in out and "Stack CREATE completed successfully" in out
