"""NaN and Infinity never reach a JSON answer: request bodies holding
them are refused, and the one writer of answers never writes them."""

import json

import pytest
import webob

from heat_lite import conf
from heat_lite.api import faults, request
from heat_lite.common import exception

CONF = conf.CONF


def _strict(raw):
    """Parse as JSON parsers other than Python's do (browsers, jq)."""

    def refuse(name):
        raise ValueError("not JSON: %s" % name)

    return json.loads(raw, parse_constant=refuse)


@pytest.fixture(scope="module", autouse=True)
def _conf():
    CONF([], project="heat_lite")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"data": NaN}',
        b'{"status": "SUCCESS", "data": {"x": [Infinity]}}',
        b'{"a": -Infinity}',
        b'{"timeout_mins": 1e999}',
    ],
)
def test_bodies_with_non_finite_numbers_are_refused(raw):
    raw_request = webob.Request.blank("/", method="POST", body=raw)
    with pytest.raises(exception.BadRequest) as info:
        request.Request(raw_request, engine=None).body(any_json=True)
    assert "JSON has no NaN or Infinity" in str(info.value)


def test_answers_never_hold_nan_or_infinity():
    """A value from elsewhere (a cloud's answer kept as an attribute, a
    row written before) becomes null."""
    body = {
        "outputs": [{"output_value": float("nan")}],
        "attributes": {"a": (float("inf"), -float("inf"), 1.5, "NaN")},
        "count": 3,
    }
    for raw in (
        request.to_response(request.Reply(200, body)).body,
        faults.json_response(200, body).body,
        faults.dumps(body),
    ):
        assert _strict(raw) == {
            "outputs": [{"output_value": None}],
            "attributes": {"a": [None, None, 1.5, "NaN"]},
            "count": 3,
        }


def test_finite_answers_are_written_as_they_are():
    body = {"a": [1, 2.5, 1e300, None, "x"], "b": {"c": True}}
    assert faults.dumps(body) == json.dumps(body).encode()
