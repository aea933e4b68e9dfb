"""Parsing stack request bodies: what is malformed gets a typed 400."""

import pytest

from heat_lite import conf
from heat_lite.api.controllers.v1 import stack_body
from heat_lite.common import exception

CONF = conf.CONF


@pytest.fixture(scope="module", autouse=True)
def _conf():
    CONF([], project="heat_lite")


def test_template_text_is_parsed():
    assert stack_body.template(
        {"template": "heat_template_version: 2018-08-31\n"}
    ) == {"heat_template_version": "2018-08-31"}
    assert stack_body.template({"template": '{"a": 1}'}) == {"a": 1}
    assert stack_body.template({}, required=False) is None


@pytest.mark.parametrize(
    "body,error",
    [
        ({}, exception.BadRequest),
        ({"template_url": "http://x"}, exception.NotSupported),
        ({"template": "a: &x [1]\nb: *x\n"}, exception.StackValidationFailed),
        ({"template": "{["}, exception.StackValidationFailed),
        ({"template": [1]}, exception.InvalidTemplateVersion),
    ],
)
def test_bad_templates(body, error):
    with pytest.raises(error):
        stack_body.template(body)


@pytest.mark.parametrize(
    "body",
    [
        {"timeout_mins": -1},
        {"timeout_mins": "x"},
        {"timeout_mins": 1.5},
        {"disable_rollback": "maybe"},
        {"disable_rollback": []},
        {"tags": [1]},
        {"tags": ["a" * 81]},
        {"tags": {"a": 1}},
        {"clear_parameters": "p"},
        {"converge": True},
    ],
)
def test_bad_options(body):
    with pytest.raises(exception.Invalid):
        stack_body.args(body)


def test_options():
    assert stack_body.args(
        {"timeout_mins": "0", "tags": "a, b", "disable_rollback": "False"}
    ) == {"timeout_mins": None, "tags": ["a", "b"], "disable_rollback": False}
    assert stack_body.args({"converge": True, "tags": None}, update=True) == {
        "converge": True,
        "tags": None,
    }


@pytest.mark.parametrize(
    "body",
    [
        {"parameters": []},
        {"files": {"a": 1}},
        {"files": "x"},
        {"environment": 3},
        {"environment_files": "x"},
        {"environment_files": [1]},
    ],
)
def test_bad_sources(body):
    with pytest.raises(exception.Invalid):
        stack_body.sources(body)


def test_adopt_needs_the_option():
    assert stack_body.adopt_data({}) is None
    with pytest.raises(exception.NotSupported):
        stack_body.adopt_data({"adopt_stack_data": "{}"})
