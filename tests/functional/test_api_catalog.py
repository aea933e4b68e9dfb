"""Routes that are not about one stack: resource types, template versions
and functions, validate, build_info, services; and the HTTP protocol
(405 with Allow, OPTIONS, JSON content type on every body, no 500 on
malformed input)."""

import requests
from heatclient import exc as heat_exc

from harness import helpers


def test_resource_types(heat):
    names = heat.resource_types.list()
    names = [t.resource_type for t in names]
    assert {"OS::Heat::None", "OS::Heat::TestResource"} <= set(names)
    only = [
        t.resource_type
        for t in heat.resource_types.list(filters={"name": "OS::Heat::Test.*"})
    ]
    assert only == ["OS::Heat::TestResource"]
    described = heat.resource_types.list(with_description=True)
    assert all(t.description is not None for t in described)
    schema = heat.resource_types.get("OS::Heat::TestResource")
    assert schema["resource_type"] == "OS::Heat::TestResource"
    assert schema["properties"]["value"]["update_allowed"] is True
    assert schema["properties"]["value"]["type"] == "string"
    assert "output" in schema["attributes"] and "show" in schema["attributes"]
    assert schema["support_status"]["status"] == "SUPPORTED"
    hot = heat.resource_types.generate_template(
        "OS::Heat::TestResource", template_type="hot"
    )
    # Named as Heat names it: the type's last part.
    assert hot["resources"]["TestResource"]["type"] == "OS::Heat::TestResource"
    assert hot["outputs"]["output"]["value"] == {
        "get_attr": ["TestResource", "output"]
    }
    assert hot["parameters"]["value"]["type"] == "string"
    cfn = heat.resource_types.generate_template("OS::Heat::TestResource")
    assert "HeatTemplateFormatVersion" in cfn
    assert cfn["Resources"]["TestResource"]["Type"] == "OS::Heat::TestResource"
    try:
        heat.resource_types.get("No::Such::Type")
        raise AssertionError("unknown type found")
    except heat_exc.HTTPNotFound:
        pass


def test_versions_functions_validate(heat):
    versions = [v.version for v in heat.template_versions.list()]
    assert "heat_template_version.2018-08-31" in versions
    functions = heat.template_versions.get("heat_template_version.2018-08-31")
    assert "get_param" in [f.functions for f in functions]
    doc = heat.stacks.validate(
        template=helpers.template(
            {"a": {"type": "OS::Heat::None"}},
            parameters={"p": {"type": "string", "default": "x"}},
        )
    )
    assert doc["Parameters"]["p"]["Default"] == "x"
    # No values at all (Horizon validates before it asks for them): 200,
    # each parameter described, none with a value.
    doc = heat.stacks.validate(
        template=helpers.template(
            {
                "a": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_param": "v"}},
                }
            },
            parameters={"v": {"type": "string"}},
            outputs={"o": {"value": {"get_attr": ["a", "output"]}}},
        )
    )
    assert doc["Parameters"]["v"]["Type"] == "String"
    assert "Value" not in doc["Parameters"]["v"]
    assert "Default" not in doc["Parameters"]["v"]
    try:
        heat.stacks.validate(template={"resources": {}})
        raise AssertionError("invalid template accepted")
    except heat_exc.HTTPBadRequest:
        pass


def test_build_info_and_services(deployment, heat):
    info = heat.build_info.build_info()
    assert info["api"]["revision"] and info["engine"]["revision"]
    services = heat.services.list()
    assert services and all(s.status in ("up", "down") for s in services)
    url = deployment.endpoint("demo") + "/services"
    response = requests.get(url, headers={"X-Roles": "member"})
    assert response.status_code == 403


def test_http_protocol(deployment):
    base = deployment.endpoint("demo")
    response = requests.delete(base + "/resource_types")
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET"
    assert response.headers["Content-Type"].startswith("application/json")
    response = requests.options(base + "/stacks")
    assert response.status_code == 204
    assert response.headers["Allow"] == "GET, POST"
    for method, path, body in (
        ("POST", "/stacks", "[1, 2]"),
        ("POST", "/stacks", '{"stack_name": 5, "template": {}}'),
        ("POST", "/stacks", '{"stack_name": "x", "template": "{["}'),
        ("POST", "/stacks", '{"stack_name": "x", "template": "a: *b"}'),
        (
            "POST",
            "/stacks",
            '{"stack_name": "x", "template": [], "parameters": []}',
        ),
        (
            "POST",
            "/stacks",
            '{"stack_name": "x", "files": [1],'
            ' "template": {"heat_template_version": "2018-08-31"}}',
        ),
        (
            "POST",
            "/stacks",
            '{"stack_name": "x", "timeout_mins": -1,'
            ' "template": {"heat_template_version": "2018-08-31"}}',
        ),
        (
            "POST",
            "/stacks",
            '{"stack_name": "x", "tags": [1],'
            ' "template": {"heat_template_version": "2018-08-31"}}',
        ),
        (
            "POST",
            "/stacks",
            '{"stack_name": "x", "converge": true,'
            ' "template": {"heat_template_version": "2018-08-31"}}',
        ),
        ("POST", "/validate", '{"template": 3}'),
        ("GET", "/stacks?limit=-1", None),
        ("GET", "/stacks?marker=nope", None),
        ("GET", "/resource_types?name=(", None),
        (
            "GET",
            "/resource_types/OS::Heat::None/template?template_type=xml",
            None,
        ),
    ):
        response = requests.request(
            method,
            base + path,
            data=body,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 400, (path, body, response.text)
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.json()["error"]["message"]
    response = requests.get(deployment.url + "/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


_CHILD = """
heat_template_version: 2014-10-16
description: the child
parameters:
  size:
    type: number
    default: 10
  secret:
    type: string
    default: s
    hidden: true
resources:
  r:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: size}
"""


def test_validate_show_nested(heat):
    """``show_nested``: each template resource's parameters, with the
    values the parent passes (hidden ones masked), its own template
    resources below it; a file used as a type is in the registry."""
    middle = _CHILD.replace("OS::Heat::RandomString", "leaf.yaml").replace(
        "length:", "not_declared_by_leaf:"
    )
    parent = helpers.template(
        {
            "mid": {
                "type": "middle.yaml",
                "properties": {
                    "size": {"get_param": "n"},
                    "secret": "from-parent",
                },
            }
        },
        parameters={"n": {"type": "number", "default": 5}},
    )
    files = {"middle.yaml": middle, "leaf.yaml": _CHILD}
    plain = heat.stacks.validate(template=parent, files=files)
    assert "NestedParameters" not in plain
    assert plain["Environment"]["resource_registry"] == {
        "middle.yaml": "middle.yaml",
        "resources": {},
    }
    doc = heat.stacks.validate(template=parent, files=files, show_nested=True)
    mid = doc["NestedParameters"]["mid"]
    assert mid["Type"] == "middle.yaml"
    assert mid["Description"] == "the child"
    assert mid["Parameters"]["size"]["Value"] == 5
    assert mid["Parameters"]["size"]["Default"] == 10
    assert mid["Parameters"]["secret"]["Value"] == "******"
    assert "from-parent" not in repr(doc)
    # The leaf: nothing passed but a property it does not declare (left
    # out, as Heat's validate does; a create would refuse it).
    leaf = mid["NestedParameters"]["r"]
    assert leaf["Type"] == "leaf.yaml"
    assert "Value" not in leaf["Parameters"]["size"]
    assert "NestedParameters" not in leaf
