"""``openstack stack create/update --dry-run`` and ``openstack
orchestration template validate`` on templates with template resources
(relative paths, registry mappings) and ResourceGroups, as Heat answers
them: a nested stack previews as the list of its own resources, an
update that needs replacement is ``replaced``, and a parameter may not
share its name with a resource."""

import json
import os
import uuid

import pytest
import yaml

from harness import helpers, osc

# Previews and validation are the engine reading templates: SQLite and
# PostgreSQL cover both deployment shapes.
BACKENDS = pytest.mark.parametrize(
    "deployment", ["sqlite", "postgresql"], indirect=True
)


def _osc(dep, project, *args, ok=True):
    cmd = [
        "--os-auth-type",
        "none",
        "--os-endpoint",
        dep.endpoint(project),
        *args,
    ]
    result = osc.run(cmd, timeout=180)
    if ok:
        assert result.returncode == 0, "%s\n%s%s" % (
            " ".join(args),
            result.stdout,
            result.stderr,
        )
    return result


def _json(dep, project, *args):
    out = _osc(dep, project, *args, "-f", "json").stdout
    # --wait prints the events it saw before the document.
    lines = out.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith(("{", "["))
    )
    return json.loads("\n".join(lines[start:]))


def _write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    return path


def _tree(root, leaf_value="leaf"):
    """top.yaml using a template resource by every kind of relative path,
    a registry mapping and a group of template resources:

    root/top.yaml, root/env.yaml, root/leaf.yaml,
    root/sub/child.yaml (uses ../leaf.yaml and x.yaml), root/sub/x.yaml
    (uses z/last.yaml, which no other template names), root/sub/z/last.yaml
    """
    _write(
        os.path.join(root, "leaf.yaml"),
        helpers.template(
            {
                "l": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_param": "v"}},
                }
            },
            outputs={"out": {"value": {"get_attr": ["l", "output"]}}},
            parameters={"v": {"type": "string", "default": leaf_value}},
        ),
    )
    _write(
        os.path.join(root, "sub", "x.yaml"),
        helpers.template(
            {"xr": {"type": "OS::Heat::None"}, "last": {"type": "z/last.yaml"}}
        ),
    )
    _write(
        os.path.join(root, "sub", "z", "last.yaml"),
        helpers.template({"zr": {"type": "OS::Heat::None"}}),
    )
    _write(
        os.path.join(root, "sub", "child.yaml"),
        helpers.template(
            {
                "deep": {"type": "../leaf.yaml", "properties": {"v": "deep"}},
                "same_dir": {"type": "x.yaml"},
            },
            outputs={"out": {"value": {"get_attr": ["deep", "out"]}}},
        ),
    )
    _write(
        os.path.join(root, "env.yaml"),
        {"resource_registry": {"My::Leaf": "leaf.yaml"}},
    )
    return _write(
        os.path.join(root, "top.yaml"),
        helpers.template(
            {
                "dotted": {"type": "./leaf.yaml"},
                "child": {"type": "sub/child.yaml"},
                "mapped": {"type": "My::Leaf", "properties": {"v": "mapped"}},
                "group": {
                    "type": "OS::Heat::ResourceGroup",
                    "properties": {
                        "count": 2,
                        "resource_def": {
                            "type": "leaf.yaml",
                            "properties": {"v": "m%index%"},
                        },
                    },
                },
                "plain": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": "p", "update_replace": True},
                },
            },
            outputs={"deep": {"value": {"get_attr": ["child", "out"]}}},
        ),
    )


def _names(items):
    """Resource names of a preview list, nested lists kept as lists."""
    return [
        _names(i) if isinstance(i, list) else i["resource_name"] for i in items
    ]


@BACKENDS
def test_dry_run_create_previews_nested_stacks(deployment, tmp_path):
    project = "pv" + uuid.uuid4().hex[:8]
    top = _tree(str(tmp_path))
    env = os.path.join(str(tmp_path), "env.yaml")
    preview = _json(
        deployment,
        project,
        "stack",
        "create",
        "--dry-run",
        "-t",
        top,
        "-e",
        env,
        "pre",
    )
    resources = preview["resources"]
    # A nested stack contributes the list of its resources, in place of
    # the resource that owns it (template order; yaml.safe_dump sorted
    # the names).
    assert _names(resources) == [
        [["l"], [["zr"], "xr"]],
        ["l"],
        [["l"], ["l"]],
        ["l"],
        "plain",
    ]
    child, dotted, group, mapped, plain = resources
    assert plain["resource_action"] == "INIT"
    # Its attributes, none known yet, as Heat's preview shows them.
    assert plain["attributes"]["output"] is None
    assert "show" in plain["attributes"]
    assert dotted[0]["stack_name"] == "pre-dotted"
    assert dotted[0]["properties"]["value"] == "leaf"
    mapped = mapped[0]
    assert mapped["properties"]["value"] == "mapped"
    assert mapped["parent_resource"] == "mapped"
    assert mapped["resource_action"] == "INIT"
    assert mapped["resource_status"] == "COMPLETE"
    assert mapped["physical_resource_id"] == ""
    assert mapped["stack_name"] == "pre-mapped"
    assert sorted(m[0]["properties"]["value"] for m in group) == ["m0", "m1"]
    assert {m[0]["parent_resource"] for m in group} == {"0", "1"}
    assert group[0][0]["stack_name"] == "pre-group-0"
    deep, same_dir = child
    assert deep[0]["properties"]["value"] == "deep"
    assert deep[0]["stack_name"] == "pre-child-deep"
    assert same_dir[1]["stack_name"] == "pre-child-same_dir"
    assert same_dir[0][0]["stack_name"] == "pre-child-same_dir-last"
    assert _json(deployment, project, "stack", "list") == []
    valid = _json(
        deployment,
        project,
        "orchestration",
        "template",
        "validate",
        "-t",
        top,
        "-e",
        env,
    )
    assert valid["Description"] == "No description"

    # The same files, created for real: the relative paths resolve the
    # same way.
    created = _json(
        deployment,
        project,
        "stack",
        "create",
        "-t",
        top,
        "-e",
        env,
        "--wait",
        "real",
    )
    assert created["stack_status"] == "CREATE_COMPLETE"
    out = _json(deployment, project, "stack", "output", "show", "real", "deep")
    assert out["output_value"] == "deep"
    _osc(deployment, project, "stack", "delete", "-y", "--wait", "real")


def _kinds(changes):
    return {
        k: sorted(r["resource_name"] for r in v) for k, v in changes.items()
    }


@BACKENDS
def test_dry_run_update_replaced_and_nested(deployment, tmp_path):
    project = "pu" + uuid.uuid4().hex[:8]
    top = _tree(str(tmp_path))
    env = os.path.join(str(tmp_path), "env.yaml")
    _json(
        deployment,
        project,
        "stack",
        "create",
        "-t",
        top,
        "-e",
        env,
        "--wait",
        "s",
    )
    # The user edits the files in place (same paths, same file:// URLs).
    _tree(str(tmp_path), leaf_value="changed")
    with open(top) as f:
        doc = yaml.safe_load(f)
    doc["resources"]["plain"]["properties"]["value"] = "q"
    doc["resources"]["group"]["properties"]["count"] = 1
    _write(top, doc)
    changes = _json(
        deployment,
        project,
        "stack",
        "update",
        "--dry-run",
        "-t",
        top,
        "-e",
        env,
        "s",
    )
    # TestResource with update_replace: a new value means a new resource;
    # resources owning a nested stack are always updated.
    assert _kinds(changes) == {
        "added": [],
        "deleted": [],
        "replaced": ["plain"],
        "unchanged": [],
        "updated": ["child", "dotted", "group", "mapped"],
    }
    replaced = changes["replaced"][0]
    assert replaced["resource_action"] == "INIT"
    updated = {r["resource_name"]: r for r in changes["updated"]}
    assert updated["child"]["resource_action"] == "CREATE"
    assert updated["child"]["physical_resource_id"]

    nested = _json(
        deployment,
        project,
        "stack",
        "update",
        "--dry-run",
        "--show-nested",
        "-t",
        top,
        "-e",
        env,
        "s",
    )
    kinds = _kinds(nested)
    # dotted's l takes the new default; mapped and group/0 and child/deep
    # pass their own value; group loses member 1 (and its l); the rest
    # of child's tree stays.
    assert kinds["replaced"] == ["plain"]
    assert kinds["deleted"] == ["1", "l"]
    assert kinds["added"] == []
    assert kinds["updated"] == sorted(
        [
            "child",
            "dotted",
            "group",
            "mapped",
            "l",
            "deep",
            "same_dir",
            "0",
            "last",
        ]
    )
    assert kinds["unchanged"] == ["l", "l", "l", "xr", "zr"]
    deleted_member = [
        r for r in nested["deleted"] if r["resource_name"] == "1"
    ][0]
    assert deleted_member["parent_resource"] == "group"
    # PATCH without a template: the stored template and files are used.
    kept = _json(
        deployment, project, "stack", "update", "--dry-run", "--existing", "s"
    )
    assert _kinds(kept) == {
        "added": [],
        "deleted": [],
        "replaced": [],
        "unchanged": ["plain"],
        "updated": ["child", "dotted", "group", "mapped"],
    }
    assert (
        _json(deployment, project, "stack", "show", "s")["stack_status"]
        == "CREATE_COMPLETE"
    )
    _osc(deployment, project, "stack", "delete", "-y", "--wait", "s")


@BACKENDS
def test_validate_rejects_parameter_and_resource_of_one_name(
    deployment, tmp_path
):
    project = "pd" + uuid.uuid4().hex[:8]
    path = _write(
        os.path.join(str(tmp_path), "dup.yaml"),
        helpers.template(
            {"web": {"type": "OS::Heat::None"}},
            parameters={"web": {"type": "string", "default": "x"}},
        ),
    )
    result = _osc(
        deployment,
        project,
        "orchestration",
        "template",
        "validate",
        "-t",
        path,
        ok=False,
    )
    assert result.returncode != 0
    assert "Duplicate names {'web'}" in result.stderr
    heat = deployment.client(project)
    with open(path) as f:
        template = yaml.safe_load(f)
    exc = helpers.http_error(lambda: heat.stacks.validate(template=template))
    assert exc.code == 400
    exc = helpers.http_error(
        lambda: heat.stacks.create(stack_name="dup", template=template)
    )
    assert exc.code == 400 and "Duplicate names {'web'}" in str(exc)


@BACKENDS
def test_dry_run_create_with_a_parameter_from_an_attribute(
    deployment, tmp_path
):
    """A template resource whose required parameter comes from another
    resource's attribute previews, its parameter shown as null (as in
    Heat) rather than "The Parameter (v) was not provided"."""
    root = str(tmp_path)
    _write(
        os.path.join(root, "needs.yaml"),
        helpers.template(
            {
                "inner": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_param": "v"}},
                }
            },
            parameters={"v": {"type": "string"}},
        ),
    )
    top = _write(
        os.path.join(root, "top.yaml"),
        helpers.template(
            {
                "source": {"type": "OS::Heat::RandomString"},
                "user": {
                    "type": "needs.yaml",
                    "properties": {"v": {"get_attr": ["source", "value"]}},
                },
            }
        ),
    )
    name = "attrparam-" + uuid.uuid4().hex[:8]
    preview = _json(
        deployment, "demo", "stack", "create", "--dry-run", "-t", top, name
    )
    resources = preview["resources"]
    nested = [r for r in resources if isinstance(r, list)]
    assert len(nested) == 1, resources
    [inner] = nested[0]
    assert inner["resource_name"] == "inner"
    assert inner["properties"]["value"] is None
