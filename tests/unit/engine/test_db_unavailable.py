"""An engine endpoint that cannot reach its database answers with a typed
503 (DatabaseUnavailable), not a driver error the API would show as 500.
"""

import json

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from harness.deployment import free_port
from heat_lite.api import faults
from heat_lite.common import exception
from heat_lite.engine.endpoint import base


def _refused():
    """The real error of a database nobody answers for."""
    engine = sa.create_engine(
        "postgresql+psycopg2://postgres@127.0.0.1:%d/x" % free_port()
    )
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("connected to a closed port")


def test_unreachable_database_is_a_503_in_heats_format():
    refused = _refused()

    @base.expected
    def show_stack():
        raise refused

    # Expected: it goes back to the RPC caller, not to the engine's log.
    with pytest.raises(messaging.ExpectedException) as info:
        show_stack()
    error = info.value.exc_info[1]
    assert isinstance(error, exception.DatabaseUnavailable)
    response = faults.exception_response(error)
    body = json.loads(response.body)
    assert response.status_int == 503
    assert body["code"] == 503
    assert body["error"]["type"] == "DatabaseUnavailable"
    assert "127.0.0.1" not in body["error"]["message"]


def test_other_errors_are_left_alone():
    @base.expected
    def show_stack():
        raise KeyError("a bug stays a bug")

    with pytest.raises(KeyError):
        show_stack()

    @base.expected
    def missing():
        raise exception.StackNotFound(name="x")

    with pytest.raises(messaging.ExpectedException) as info:
        missing()
    assert isinstance(info.value.exc_info[1], exception.StackNotFound)
