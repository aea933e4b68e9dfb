"""The HOT language through the API: functions resolved by the engine on
real resources, validate, template versions and their errors."""

import requests
from heatclient import exc as heat_exc

from tests.functional import helpers

FUNCTIONS = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "name": {"type": "string", "default": "web"},
        "count": {"type": "number", "default": 2},
        "flags": {"type": "comma_delimited_list", "default": "a,b"},
        "secret": {"type": "string", "default": "s3cr3t", "hidden": True},
        "enabled": {"type": "boolean", "default": False},
    },
    "conditions": {"is_enabled": {"get_param": "enabled"},
                   "is_web": {"equals": [{"get_param": "name"}, "web"]}},
    "resources": {
        "base": {"type": "OS::Heat::TestResource",
                 "properties": {"value": {"str_replace": {
                     "template": "$n-x", "params": {"$n": {
                         "get_param": "name"}}}}}},
        "extra": {"type": "OS::Heat::None", "condition": "is_enabled"},
        "user": {"type": "OS::Heat::TestResource", "properties": {
            "value": {"list_join": ["+", [
                {"get_attr": ["base", "output"]},
                {"get_resource": "base"}]]}}},
    },
    "outputs": {
        "joined": {"value": {"get_attr": ["user", "output"]}},
        "repeat": {"value": {"repeat": {
            "for_each": {"%f%": {"get_param": "flags"}},
            "template": "flag-%f%"}}},
        "merged": {"value": {"map_merge": [{"a": 1}, {"b": {
            "get_param": "count"}}]}},
        "yaql": {"value": {"yaql": {"expression": "$.data.l.sum()",
                                    "data": {"l": [1, 2, 3]}}}},
        "digest": {"value": {"digest": ["sha256", "x"]}},
        "split": {"value": {"str_split": [",", "p,q,r", 1]}},
        "url": {"value": {"make_url": {"scheme": "https", "host": "h",
                                       "port": 8, "path": "/p"}}},
        "concat": {"value": {"list_concat_unique": [[1, 2], [2, 3]]}},
        "contains": {"value": {"contains": ["a", {"get_param": "flags"}]}},
        "filtered": {"value": {"filter": [["a"], {"get_param": "flags"}]}},
        "if_web": {"value": {"if": ["is_web", "yes", "no"]}},
        "absent": {"value": {"get_resource": "extra"},
                   "condition": "is_enabled"},
        "stack": {"value": {"get_param": "OS::stack_name"}},
    },
}


def test_functions_resolve_on_real_resources(deployment, heat):
    stack_id = helpers.create(heat, "functions", FUNCTIONS)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get(stack_id)
    outputs = {o["output_key"]: o.get("output_value")
               for o in stack.outputs}
    resources = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(resources) == {"base", "user"}  # extra's condition is false
    base_id = resources["base"].physical_resource_id
    assert outputs["joined"] == "web-x+%s" % base_id
    assert outputs["repeat"] == ["flag-a", "flag-b"]
    assert outputs["merged"] == {"a": 1, "b": 2}
    assert outputs["yaql"] == 6
    assert outputs["digest"] == (
        "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881")
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
        (v["aliases"] for v in versions), [])
    functions = requests.get(
        url + "/heat_template_version.2016-10-14/functions").json()
    names = {f["functions"] for f in functions["template_functions"]}
    assert "yaql" in names and "filter" not in names


def _error(call):
    try:
        call()
    except heat_exc.HTTPException as exc:
        return exc
    raise AssertionError("no error")


def test_template_errors_name_the_path(deployment, heat):
    old = {"heat_template_version": "2015-04-30", "resources": {
        "web": {"type": "OS::Heat::None",
                "properties": {"size": {"map_merge": [{}, {}]}}}}}
    exc = _error(lambda: heat.stacks.validate(template=old))
    assert exc.code == 400
    assert "resources.web.properties.size" in str(exc)
    assert "map_merge" in str(exc)
    typed = {"heat_template_version": "2018-08-31", "resources": {
        "t": {"type": "OS::Heat::TestResource",
              "properties": {"wait_secs": "soon"}}}}
    exc = _error(lambda: helpers.create(heat, "typed", typed))
    assert exc.code == 400 and "resources.t.properties.wait_secs" in str(exc)
    missing = {"heat_template_version": "2018-08-31",
               "parameters": {"p": {"type": "string"}},
               "resources": {}}
    exc = _error(lambda: helpers.create(heat, "missing", missing))
    assert exc.code == 400 and "The Parameter (p) was not provided" in \
        str(exc)
    exc = _error(lambda: helpers.create(heat, "unknown", missing,
                                        parameters={"p": "x", "q": "y"}))
    assert exc.code == 400 and "(q)" in str(exc)
