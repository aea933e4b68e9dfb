"""A resource failure that is an outcome is logged as one line; a bug
gets its traceback. Outcomes: heat_lite's typed errors, a resource's
stated failure (a wait condition's timeout, a failed deployment), and an
answer of the cloud (openstacksdk's and keystoneauth's errors, asked of
the cloud side so that the engine imports no cloud plugin)."""

import logging

import pytest
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc

from heat_lite.common import exception
from heat_lite.engine import cloud
from heat_lite.engine.worker import failures
from heat_lite.resources import services, software_deployment, wait_condition

LOGGER = "heat_lite.engine.worker.failures"

OUTCOMES = [
    wait_condition.WaitConditionTimeout("0 of 1 received"),
    wait_condition.WaitConditionFailure("the app said no"),
    software_deployment.DeploymentFailed("deploy_status_code 3"),
    exception.StackValidationFailed(message="bad"),
    sdk_exc.ConflictException("Quota exceeded for instances"),
    sdk_exc.ResourceFailure("server went to ERROR"),
    ks_exc.Unauthorized("token expired"),
]


@pytest.mark.parametrize("exc", OUTCOMES, ids=lambda e: type(e).__name__)
def test_an_outcome_is_one_line(exc, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    failures.log_unexpected(exc, "Resource wait CREATE")
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.INFO
    assert record.exc_info is None
    assert record.getMessage() == "Resource wait CREATE failed: %s" % exc


@pytest.mark.parametrize("exc", [ZeroDivisionError("x"), KeyError("k")])
def test_a_bug_keeps_its_traceback(exc, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    failures.log_unexpected(exc, "Resource web CREATE")
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.ERROR
    assert record.exc_info[1] is exc
    assert "unexpectedly" in record.getMessage()


def test_without_cloud_plugins_no_error_is_the_clouds():
    assert not services.NoCloud.is_cloud_error(sdk_exc.ConflictException("x"))
    assert cloud.side().is_cloud_error(sdk_exc.ConflictException("x"))
    assert not cloud.side().is_cloud_error(ValueError("x"))
