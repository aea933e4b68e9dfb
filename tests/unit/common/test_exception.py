"""Typed exceptions must survive an oslo.messaging hop intact."""

import inspect

import pytest
from oslo_messaging._drivers import common as rpc_common

from heat_lite.common import exception

CASES = [
    exception.StackNotFound(name="web"),
    exception.StackExists(stack_name="web"),
    exception.StackValidationFailed(
        path="resources.a.properties.x", msg="bad"
    ),
    exception.CircularDependencyException(cycle="a, b"),
    exception.UserParameterMissing(key="p"),
    exception.RequestTooLarge(message="big"),
    exception.NotSupported(feature="Snapshots"),
    exception.EventNotFound(event_id="e1"),
    exception.ResourceNotFound(resource_name="r", stack_name="s"),
]


@pytest.mark.parametrize("exc", CASES, ids=lambda e: type(e).__name__)
def test_round_trip(exc):
    try:
        raise exc
    except exception.HeatLiteException:
        data = rpc_common.serialize_remote_exception(
            __import__("sys").exc_info()
        )
    remote = rpc_common.deserialize_remote_exception(
        data, ["heat_lite.common.exception"]
    )
    assert isinstance(remote, type(exc))
    assert type(remote).__name__ == type(exc).__name__ + "_Remote"
    assert remote.args[0] == exc.message
    assert remote.code == exc.code


def test_every_exception_has_an_http_code():
    for _, cls in inspect.getmembers(exception, inspect.isclass):
        if issubclass(cls, exception.HeatLiteException):
            codes = (400, 401, 403, 404, 409, 413, 415, 429, 500, 503)
            assert cls.code in codes, cls


def test_too_many_requests_says_when_to_retry():
    exc = exception.TooManyRequests(retry_after=3, reason="slow down")
    assert exc.code == 429 and exc.headers == {"Retry-After": "3"}
    assert str(exc) == "Too many requests: slow down"


def test_messages():
    assert (
        str(exception.StackNotFound(name="x"))
        == "The Stack (x) could not be found."
    )
    assert (
        str(exception.StackValidationFailed(path="resources.a", msg="oops"))
        == "resources.a: oops"
    )
