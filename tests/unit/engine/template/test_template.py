"""Template and BoundTemplate: the interface the engine is written against."""

import datetime
import sys

import pytest

from heat_lite.common import exception
from heat_lite.engine import graph, template
from heat_lite.engine.template import hot, rsrc_defn

STACK = {"name": "s", "id": "sid", "project_id": "pid"}

TMPL = {
    "heat_template_version": "2021-04-16",
    "description": "demo",
    "parameters": {
        "size": {"type": "number", "default": 1, "immutable": True},
        "secret": {"type": "string", "hidden": True, "default": "pw"},
        "names": {"type": "comma_delimited_list", "default": "a,b"},
        "with_db": {"type": "boolean", "default": True},
    },
    "conditions": {"db": {"get_param": "with_db"}},
    "resources": {
        "db": {
            "type": "OS::Heat::None",
            "condition": "db",
            "deletion_policy": "Snapshot",
        },
        "web": {
            "type": "OS::Heat::TestResource",
            "description": "front",
            "depends_on": "net",
            "metadata": {"m": {"get_attr": ["net", "x"]}},
            "properties": {
                "db": {"if": ["db", {"get_resource": "db"}]},
                "size": {"get_param": "size"},
            },
            "update_policy": {"batch": 1},
        },
        "net": {"type": "OS::Heat::None"},
    },
    "outputs": {
        "db_id": {
            "value": {"get_resource": "db"},
            "condition": "db",
            "description": "the db",
        },
        "web": {"value": {"get_attr": ["web", "name"]}},
    },
}


def test_static_template():
    t = template.parse(TMPL)
    assert isinstance(t, hot.Template)
    assert t.version == "2021-04-16" and t.description == "demo"
    assert t.parameters["secret"].hidden
    assert t.parameters["size"].immutable
    assert t.parameters["names"].type == "comma_delimited_list"
    assert t.parameters["secret"].display("pw") == "******"
    web = t.resources["web"]
    assert isinstance(web, rsrc_defn.ResourceDefinition)
    assert (web.name, web.type, web.description) == (
        "web",
        "OS::Heat::TestResource",
        "front",
    )
    assert web.explicit_depends == ["net"]
    assert web.depends == {"net", "db"}
    assert web.snippet is TMPL["resources"]["web"]
    assert t.resources["db"].deletion_policy == "Snapshot"
    assert t.outputs["db_id"].description == "the db"
    g = t.dependency_graph()
    assert isinstance(g, graph.Graph)
    assert set(g) == {"db", "web", "net"}


def test_bound_template_with_condition_true():
    b = template.parse(TMPL).bind({}, STACK)
    assert list(b.resources) == ["db", "web", "net"]
    assert b.resources["web"].depends == {"net", "db"}
    assert b.resources["web"].update_policy == {"batch": 1}
    assert b.dependency_graph().topological_order()[-1] == "web"
    assert b.outputs["db_id"].enabled


def test_bound_template_with_condition_false():
    b = template.parse(TMPL).bind({"parameters": {"with_db": False}}, STACK)
    assert list(b.resources) == ["web", "net"]
    assert b.resources["web"].depends == {"net"}
    assert (
        b.resources["web"].properties == {"size": {"get_param": "size"}}
        or "db" not in b.resources["web"].properties
    )
    assert b.outputs["db_id"].value is None
    assert b.conditions == {"db": False}
    assert set(b.dependency_graph()) == {"web", "net"}


def test_bound_accessors():
    b = template.parse(TMPL).bind(
        {"parameters": {"secret": "hush", "size": "3"}}, STACK
    )
    assert b.parameters["size"] == 3
    assert b.param("OS::stack_name") == "s"
    assert b.param("OS::stack_id") == "sid"
    assert b.param("OS::project_id") == "pid"
    with pytest.raises(exception.UserParameterMissing):
        b.param("nope")
    shown = b.parameters_display()
    assert shown["secret"] == "******"
    assert shown["names"] == "a,b"
    assert shown["with_db"] == "true"
    assert b.environment_display()["parameters"]["secret"] == "******"
    assert b.environment["parameters"]["secret"] == "hush"
    assert b.description == "demo"
    assert b.condition("db") is True


def test_dependency_graph_is_a_fresh_copy():
    b = template.parse(TMPL).bind({}, STACK)
    g = b.dependency_graph()
    g.add_edge("net", "web")
    assert b.dependency_graph().topological_order()


def test_file_lookup():
    t = template.parse(
        {"heat_template_version": "2018-08-31"}, {"a.sh": "echo"}
    )
    b = t.bind(None, STACK)
    assert b.file("a.sh") == "echo"
    with pytest.raises(exception.StackValidationFailed) as info:
        b.file("b.sh")
    assert "get_file path: b.sh" in str(info.value)


def test_immutable_parameters():
    t = template.parse(TMPL)
    assert t.immutable_changes(
        {"size": 1, "secret": "a"}, {"size": 2, "secret": "b"}
    ) == ["size"]
    assert t.immutable_changes({"size": 1}, {"size": 1}) == []
    with pytest.raises(exception.ImmutableParameterModified) as info:
        t.check_immutable({"size": 1}, {"size": 2})
    assert str(info.value) == (
        "The following parameters are immutable and may not be updated: size"
    )


@pytest.mark.parametrize(
    "value",
    [
        datetime.date(2016, 10, 14),
        "2016-10-14",
        "newton",
        "heat_template_version.2016-10-14",
    ],
)
def test_version_forms(value):
    t = template.parse({"heat_template_version": value})
    assert t.version == "2016-10-14"


def test_static_references_to_unknown_resources_in_outputs():
    with pytest.raises(exception.InvalidTemplateReference) as info:
        template.parse(
            {
                "heat_template_version": "2018-08-31",
                "outputs": {"o": {"value": {"get_attr": ["x", "y"]}}},
            }
        )
    assert "outputs.o.value" in str(info.value)


def test_self_dependency_is_a_cycle():
    with pytest.raises(exception.CircularDependencyException) as info:
        template.parse(
            {
                "heat_template_version": "2018-08-31",
                "resources": {"a": {"type": "T", "depends_on": "a"}},
            }
        )
    assert "a" in str(info.value)


def test_non_mapping_template():
    with pytest.raises(exception.StackValidationFailed):
        template.parse(["heat_template_version"])


def _big_template(count):
    resources = {}
    for i in range(count):
        props = {
            "name": {
                "str_replace": {
                    "template": "r$i",
                    "params": {"$i": {"get_param": "prefix"}},
                }
            },
            "size": {"get_param": "size"},
        }
        if i:
            props["prev"] = {"get_attr": ["r%d" % (i - 1), "value"]}
            props["half"] = {"get_resource": "r%d" % (i // 2)}
        resources["r%d" % i] = {
            "type": "OS::Heat::TestResource",
            "properties": props,
        }
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {
            "prefix": {"type": "string", "default": "p"},
            "size": {"type": "number", "default": 1},
        },
        "resources": resources,
    }


def _calls_to_parse_and_bind(count):
    """Python function calls made by parse + bind of a ``count``-resource
    template: the work itself, which a busy machine does not change (the
    time is measured by bench, not here)."""
    tmpl = _big_template(count)
    calls = [0]

    def count_calls(frame, event, arg):
        if event == "call":
            calls[0] += 1

    sys.setprofile(count_calls)
    try:
        bound = template.parse(tmpl).bind({}, STACK)
    finally:
        sys.setprofile(None)
    assert len(bound.resources) == count
    return calls[0]


def test_parse_and_bind_grow_linearly_with_the_resources():
    # A lookup by name that scans every resource (or a dependency walk per
    # reference) makes this quadratic: 4x the calls for 2x the resources.
    small, large = (_calls_to_parse_and_bind(n) for n in (500, 1000))
    assert large < 2.2 * small, (small, large)
