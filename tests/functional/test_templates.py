"""The HOT language through the API: functions resolved by the engine on
real resources, validate, template versions and their errors."""

import json

import requests

from harness import helpers

error = helpers.http_error

FUNCTIONS = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "name": {"type": "string", "default": "web"},
        "count": {"type": "number", "default": 2},
        "flags": {"type": "comma_delimited_list", "default": "a,b"},
        "secret": {"type": "string", "default": "s3cr3t", "hidden": True},
        "enabled": {"type": "boolean", "default": False},
    },
    "conditions": {
        "is_enabled": {"get_param": "enabled"},
        "is_web": {"equals": [{"get_param": "name"}, "web"]},
    },
    "resources": {
        "base": {
            "type": "OS::Heat::TestResource",
            "properties": {
                "value": {
                    "str_replace": {
                        "template": "$n-x",
                        "params": {"$n": {"get_param": "name"}},
                    }
                }
            },
        },
        "extra": {"type": "OS::Heat::None", "condition": "is_enabled"},
        "user": {
            "type": "OS::Heat::TestResource",
            "properties": {
                "value": {
                    "list_join": [
                        "+",
                        [
                            {"get_attr": ["base", "output"]},
                            {"get_resource": "base"},
                        ],
                    ]
                }
            },
        },
    },
    "outputs": {
        "joined": {"value": {"get_attr": ["user", "output"]}},
        "repeat": {
            "value": {
                "repeat": {
                    "for_each": {"%f%": {"get_param": "flags"}},
                    "template": "flag-%f%",
                }
            }
        },
        "merged": {
            "value": {"map_merge": [{"a": 1}, {"b": {"get_param": "count"}}]}
        },
        "yaql": {
            "value": {
                "yaql": {
                    "expression": "$.data.l.sum()",
                    "data": {"l": [1, 2, 3]},
                }
            }
        },
        "digest": {"value": {"digest": ["sha256", "x"]}},
        "split": {"value": {"str_split": [",", "p,q,r", 1]}},
        "url": {
            "value": {
                "make_url": {
                    "scheme": "https",
                    "host": "h",
                    "port": 8,
                    "path": "/p",
                }
            }
        },
        "concat": {"value": {"list_concat_unique": [[1, 2], [2, 3]]}},
        "contains": {"value": {"contains": ["a", {"get_param": "flags"}]}},
        "filtered": {"value": {"filter": [["a"], {"get_param": "flags"}]}},
        "if_web": {"value": {"if": ["is_web", "yes", "no"]}},
        "absent": {
            "value": {"get_resource": "extra"},
            "condition": "is_enabled",
        },
        "stack": {"value": {"get_param": "OS::stack_name"}},
    },
}


def test_functions_resolve_on_real_resources(deployment, heat):
    stack_id = helpers.create(heat, "functions", FUNCTIONS)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get(stack_id)
    outputs = {o["output_key"]: o.get("output_value") for o in stack.outputs}
    resources = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(resources) == {"base", "user"}  # extra's condition is false
    base_id = resources["base"].physical_resource_id
    assert outputs["joined"] == "web-x+%s" % base_id
    assert outputs["repeat"] == ["flag-a", "flag-b"]
    assert outputs["merged"] == {"a": 1, "b": 2}
    assert outputs["yaql"] == 6
    assert outputs["digest"] == (
        "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
    )
    assert outputs["split"] == "q"
    assert outputs["url"] == "https://h:8/p"
    assert outputs["concat"] == [1, 2, 3]
    assert outputs["contains"] is True
    assert outputs["filtered"] == ["b"]
    assert outputs["if_web"] == "yes"
    assert outputs["absent"] is None
    assert outputs["stack"] == "functions"
    assert stack.parameters["secret"] == "******"
    assert stack.parameters["flags"] == "a,b"
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_validate_and_versions(deployment, heat):
    doc = heat.stacks.validate(template=FUNCTIONS)
    assert doc["Parameters"]["secret"]["NoEcho"] == "true"
    assert doc["Parameters"]["count"]["Type"] == "Number"
    assert "Environment" in doc
    url = deployment.endpoint() + "/template_versions"
    versions = requests.get(url).json()["template_versions"]
    names = [v["version"] for v in versions]
    assert "heat_template_version.2021-04-16" in names
    assert "heat_template_version.wallaby" in sum(
        (v["aliases"] for v in versions), []
    )
    functions = requests.get(
        url + "/heat_template_version.2016-10-14/functions"
    ).json()
    names = {f["functions"] for f in functions["template_functions"]}
    assert "yaql" in names and "filter" not in names


def test_validate_needs_no_values_for_what_parameters_feed(heat):
    """Horizon's Launch form validates the template before the user has
    typed any value: a required property fed by a parameter without one
    is not "not assigned" there (Heat's non-strict validate checks no
    property values), but a create without the value is refused."""
    template = helpers.template(
        {
            "r": {
                "type": "OS::Heat::RandomString",
                "properties": {"length": {"get_param": "size"}},
            },
            "n": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 1,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": {"get_param": "word"}},
                    },
                },
            },
            "p": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_param": "net"}},
            },
        },
        parameters={
            "size": {"type": "number"},
            "word": {"type": "string"},
            "net": {"type": "string"},
        },
    )
    doc = heat.stacks.validate(template=template)
    assert set(doc["Parameters"]) == {"size", "word", "net"}
    exc = error(lambda: helpers.create(heat, "valueless", template))
    assert exc.code == 400 and "was not provided" in str(exc)


def test_template_errors_name_the_path(deployment, heat):
    old = {
        "heat_template_version": "2015-04-30",
        "resources": {
            "web": {
                "type": "OS::Heat::None",
                "properties": {"size": {"map_merge": [{}, {}]}},
            }
        },
    }
    exc = error(lambda: heat.stacks.validate(template=old))
    assert exc.code == 400
    assert "resources.web.properties.size" in str(exc)
    assert "map_merge" in str(exc)
    typed = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "t": {
                "type": "OS::Heat::TestResource",
                "properties": {"wait_secs": "soon"},
            }
        },
    }
    exc = error(lambda: helpers.create(heat, "typed", typed))
    assert exc.code == 400 and "resources.t.properties.wait_secs" in str(exc)
    missing = {
        "heat_template_version": "2018-08-31",
        "parameters": {"p": {"type": "string"}},
        "resources": {},
    }
    exc = error(lambda: helpers.create(heat, "missing", missing))
    assert exc.code == 400 and "The Parameter (p) was not provided" in str(exc)
    exc = error(
        lambda: helpers.create(
            heat, "unknown", missing, parameters={"p": "x", "q": "y"}
        )
    )
    assert exc.code == 400 and "(q)" in str(exc)
    # A resource's get_param of an undeclared name is refused ...
    undeclared = helpers.template(
        {
            "r": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "nope"}},
            }
        }
    )
    exc = error(lambda: helpers.create(heat, "undeclared", undeclared))
    # ... in Heat's words, empty fields and all (heat-tempest-plugin's
    # test_preview.test_basic_fail matches them).
    assert exc.code == 400 and (
        "Property error: : resources.r.properties.value: : "
        "The Parameter (nope) was not provided." in str(exc)
    )


_CHILD_WITH_BAD_OUTPUT = """
heat_template_version: 2015-10-15
resources:
  a:
    type: OS::Heat::TestResource
    properties:
      value: 'a'
outputs:
  good:
    value: {get_attr: [a, output]}
  bad:
    value: {get_param: foo}
"""


def test_an_output_that_does_not_resolve_is_an_output_error(deployment, heat):
    """... but an output's is not (as in Heat): the stack is created and
    the output reported with ``output_error``; through a template
    resource, the parent's output names the resource and the child's
    output."""
    parent = {
        "heat_template_version": "2015-10-15",
        "resources": {"kid": {"type": "kid.yaml"}},
        "outputs": {
            "good": {"value": {"get_attr": ["kid", "good"]}},
            "bad": {"value": {"get_attr": ["kid", "bad"]}},
        },
    }
    stack_id = helpers.create(
        heat, "outerr", parent, files={"kid.yaml": _CHILD_WITH_BAD_OUTPUT}
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o for o in heat.stacks.get(stack_id).outputs}
    assert outputs["good"]["output_value"] == "a"
    assert "output_error" not in outputs["good"]
    assert outputs["bad"]["output_value"] is None
    assert outputs["bad"]["output_error"] == (
        "Error in kid output bad: The Parameter (foo) was not provided."
    )
    shown = heat.stacks.output_show(stack_id, "bad")["output"]
    assert shown["output_error"] == outputs["bad"]["output_error"]
    # The child on its own: the same output, its own error.
    child = heat.resources.get(stack_id, "kid").physical_resource_id
    mine = {o["output_key"]: o for o in heat.stacks.get(child).outputs}
    assert mine["bad"]["output_error"] == (
        "The Parameter (foo) was not provided."
    )
    # The deployment is the worker's for the session: later tests check
    # its ledger for leaks.
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


MORE = {
    "heat_template_version": "wallaby",
    "parameters": {
        "cfg": {"type": "json", "default": {"a": {"b": "deep"}}},
        "env": {
            "type": "string",
            "default": "prod",
            "constraints": [{"allowed_values": ["prod", "dev"]}],
        },
    },
    "conditions": {
        "prod": {"equals": [{"get_param": "env"}, "prod"]},
        "both": {
            "and": [{"not": {"equals": [1, 2]}}, {"or": ["prod", False]}]
        },
    },
    "resources": {
        "file_user": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_file": "greeting.txt"}},
        },
        "child": {"type": "facade.yaml", "metadata": {"role": "db"}},
    },
    "outputs": {
        "file": {"value": {"get_attr": ["file_user", "output"]}},
        "all_attrs": {"value": {"get_attr": ["file_user"]}},
        "deep": {"value": {"get_param": ["cfg", "a", "b"]}},
        "strict": {
            "value": {
                "str_replace_strict": {
                    "template": "x-NAME",
                    "params": {"NAME": "y"},
                }
            }
        },
        "vstrict": {
            "value": {
                "str_replace_vstrict": {
                    "template": "x-NAME",
                    "params": {"NAME": "z"},
                }
            }
        },
        "replaced": {
            "value": {
                "map_replace": [
                    {"k1": "v1", "k2": "v2"},
                    {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
                ]
            }
        },
        "perms": {
            "value": {
                "repeat": {
                    "for_each": {"<%a%>": [1, 2], "<%b%>": ["x", "y"]},
                    "template": "<%a%>-<%b%>",
                    "permutations": False,
                }
            }
        },
        "concat": {"value": {"list_concat": [[1], [2, 3]]}},
        "pruned": {
            "value": [1, {"if": ["prod", 2]}, {"if": [{"not": "prod"}, 3]}]
        },
        "both": {"value": {"if": ["both", "yes", "no"]}},
        "joined": {"value": {"list_join": [",", ["a", "b"], ["c"]]}},
        "facade": {"value": {"get_attr": ["child", "role"]}},
    },
}

FACADE = {
    "heat_template_version": "2018-08-31",
    "resources": {},
    "outputs": {"role": {"value": {"resource_facade": "metadata"}}},
}


def test_more_functions_through_the_api(deployment, heat):
    files = {"greeting.txt": "hello", "facade.yaml": json.dumps(FACADE)}
    stack_id = helpers.create(heat, "more", MORE, files=files)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get(stack_id)
    outputs = {o["output_key"]: o.get("output_value") for o in stack.outputs}
    errors = {
        o["output_key"]: o.get("output_error")
        for o in stack.outputs
        if o.get("output_error")
    }
    assert outputs["file"] == "hello"
    assert outputs["all_attrs"]["output"] == "hello"
    assert outputs["deep"] == "deep"
    assert outputs["strict"] == "x-y"
    assert outputs["vstrict"] == "x-z"
    assert outputs["replaced"] == {"K1": "v1", "k2": "V2"}
    assert outputs["perms"] == ["1-x", "2-y"]
    assert outputs["concat"] == [1, 2, 3]
    assert outputs["pruned"] == [1, 2]
    assert outputs["both"] == "yes"
    assert outputs["joined"] == "a,b,c"
    assert outputs["facade"] == {"role": "db"}
    assert not errors
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


_CIDR_CHILD = """
heat_template_version: 2015-04-30
parameters:
  cidr:
    type: string
    constraints: [{custom_constraint: net_cidr}]
resources:
  x:
    type: OS::Heat::None
"""


def test_preview_skips_custom_constraints_inside_new_nested_stacks(
    deployment, heat
):
    """A nested stack in a preview gets what its parent's get_resource
    gives before anything exists (the resource's name): its values are not
    checked against custom constraints there (as Heat's preview); the
    same value at the top level still is."""
    tmpl = helpers.template(
        {
            "net": {"type": "OS::Heat::None"},
            "kid": {
                "type": "child.yaml",
                "properties": {"cidr": {"get_resource": "net"}},
            },
        }
    )
    shown = heat.stacks.preview(
        stack_name="pvc", template=tmpl, files={"child.yaml": _CIDR_CHILD}
    ).to_dict()
    names = [
        r[0]["resource_name"] if isinstance(r, list) else r["resource_name"]
        for r in shown["resources"]
    ]
    assert sorted(names) == ["net", "x"]
    exc = error(
        lambda: heat.stacks.preview(
            stack_name="pvt",
            template=_CIDR_CHILD,
            parameters={"cidr": "net"},
        )
    )
    assert exc.code == 400 and "does not validate net_cidr" in str(exc)
