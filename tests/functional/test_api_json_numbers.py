"""NaN and Infinity never reach a JSON answer of a real heat_lite:
Python's json reads and writes them, no other JSON parser does (a
browser's ``JSON.parse``, ``jq``). Every answer here is parsed as those
parse it."""

import json

import pytest
import requests

from harness import helpers

pytestmark = pytest.mark.functional
HOT = "heat_template_version: 2018-08-31\n"
JSON = {"Content-Type": "application/json"}


def _strict(response):
    def refuse(name):
        raise AssertionError("%s in the answer: %s" % (name, response.text))

    return json.loads(response.text, parse_constant=refuse)


def _post(url, raw):
    return requests.post(url, data=raw, headers=JSON, timeout=30)


def _refused(response, *fragments):
    assert response.status_code == 400, response.text
    error = _strict(response)["error"]
    for fragment in fragments:
        assert fragment in error["message"], error
    return error


@pytest.mark.parametrize(
    "number", ["NaN", "Infinity", "-Infinity", "1e999", "-1.5E+400"]
)
def test_bodies_with_non_finite_numbers(deployment, number):
    url = deployment.endpoint("numbers")
    template = '{"heat_template_version": "2018-08-31", "outputs": {"o": '
    template += '{"value": %s}}}' % number
    for path, raw in (
        ("/stacks", '{"stack_name": "n", "template": %s}' % template),
        ("/validate", '{"template": %s}' % template),
        ("/stacks", '{"stack_name": "n", "timeout_mins": %s}' % number),
    ):
        _refused(_post(url + path, raw), "JSON has no NaN or Infinity")
    assert requests.get(url + "/stacks", timeout=30).json() == {"stacks": []}


def test_templates_and_parameters(deployment):
    url = deployment.endpoint("numbers-templates")
    cases = [
        ({"template": HOT + "outputs:\n  o: {value: .nan}\n"}, "line 3"),
        ({"template": HOT + "outputs:\n  o: {value: -.inf}\n"}, "line 3"),
        (
            {
                "template": HOT + "parameters:\n  p: {type: number}\n",
                "parameters": {"p": "inf"},
            },
            "Parameter 'p' is invalid",
        ),
        (
            {
                "template": HOT + "parameters:\n  p: {type: number}\n",
                "environment": {"parameter_defaults": {"p": "NaN"}},
            },
            "Parameter 'p' is invalid",
        ),
        (
            {
                "template": HOT + "resources:\n  v:\n    type: OS::Heat::"
                "Value\n    properties: {type: number, value: '1e999'}\n"
            },
            "resources.v.properties.value",
        ),
    ]
    for body, where in cases:
        body["stack_name"] = "n"
        response = _post(url + "/stacks", json.dumps(body))
        _refused(response, where, "finite")


def test_a_yaql_infinity_is_an_output_error(deployment):
    url = deployment.endpoint("numbers-yaql")
    template = HOT.replace("2018-08-31", "2016-10-14") + (
        "outputs:\n  big:\n    value:\n      yaql:\n"
        "        expression: $.data.x * $.data.x\n"
        "        data: {x: 1.0e+200}\n"
        "  fine: {value: 1.5}\n"
    )
    made = _post(
        url + "/stacks", json.dumps({"stack_name": "y", "template": template})
    )
    assert made.status_code == 201, made.text
    stack_id = made.json()["stack"]["id"]
    heat = deployment.client("numbers-yaql")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    shown = requests.get("%s/stacks/y/%s" % (url, stack_id), timeout=30)
    outputs = {o["output_key"]: o for o in _strict(shown)["stack"]["outputs"]}
    assert outputs["fine"]["output_value"] == 1.5
    assert "NaN or Infinity" in outputs["big"]["output_error"]
    one = requests.get(
        "%s/stacks/y/%s/outputs/big" % (url, stack_id), timeout=30
    )
    assert "NaN or Infinity" in str(_strict(one))
    helpers.delete_all(heat)


def test_signal_data(deployment):
    url = deployment.endpoint("numbers-signal")
    tmpl = helpers.template({"h": {"type": "OS::Heat::WaitConditionHandle"}})
    made = _post(
        url + "/stacks", json.dumps({"stack_name": "s", "template": tmpl})
    )
    stack_id = made.json()["stack"]["id"]
    heat = deployment.client("numbers-signal")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    signal = "%s/stacks/s/%s/resources/h/signal" % (url, stack_id)
    _refused(_post(signal, '{"data": {"load": NaN}}'), "NaN")
    assert heat.resources.metadata(stack_id, "h") == {}
    helpers.delete_all(heat)
