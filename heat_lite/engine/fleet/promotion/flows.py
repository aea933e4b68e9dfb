"""A promotion's taskflow flows, made by factory functions.

``get_promotion_flow``::

    linear: apply   (create the target, or update it in place; its
                     revert deletes a target the promotion created)
            gate    (follow the operation and its checks to the end)
            finish  (the promotion is COMPLETE)

A gate that fails raises ``GateFailed``: taskflow reverts ``apply`` (the
verified update has rolled the target back by itself; a created target
is deleted) and the runner settles the promotion FAILED with the reason.

``get_promotion_rollback_flow`` is the one-step undo of a COMPLETE
promotion: ``undo`` (the target back onto what it had, verified again
when the promotion had a gate, or deleted if the promotion created it),
then ``finish`` (ROLLED_BACK).
"""

import logging
import time

from taskflow import task
from taskflow.patterns import linear_flow

from heat_lite.common.states import PROMOTION as P
from heat_lite.db import api as db_api

LOG = logging.getLogger(__name__)


def _patient(driver, fn, *args, **kwargs):
    """``fn(*args)``, again while the database cannot be reached: every
    step of the driver may be repeated (what it starts is recorded
    first), and a database blip must not revert a promotion whose
    update may well be passing its checks."""
    while True:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not db_api.is_unavailable(exc):
                raise
            LOG.warning(
                "Promotion step %s waits for the database: %s",
                fn.__name__,
                exc,
            )
            time.sleep(max(driver.poll, 1.0))


class Apply(task.Task):
    def __init__(self, run, driver):
        super().__init__(name="apply", provides="traversal")
        self.run = run
        self.driver = driver

    def execute(self):
        return _patient(self.driver, self.driver.apply, self.run)

    def revert(self, result=None, **kwargs):
        _patient(self.driver, self.driver.undo, self.run, after_failure=True)


class Gate(task.Task):
    def __init__(self, run, driver):
        super().__init__(name="gate", provides="passed")
        self.run = run
        self.driver = driver

    def execute(self, traversal):
        return _patient(self.driver, self.driver.gate, self.run, traversal)


class Finish(task.Task):
    def __init__(self, run, status, requires):
        super().__init__(name="finish", requires=requires)
        self.run = run
        self.status = status

    def execute(self, **kwargs):
        reason = next(iter(kwargs.values()), None) or ""
        self.run.settle(self.status, reason)


class Undo(task.Task):
    def __init__(self, run, driver):
        super().__init__(name="undo", provides="undone")
        self.run = run
        self.driver = driver

    def execute(self):
        return "rolled back: %s" % _patient(
            self.driver, self.driver.undo, self.run
        )


def get_promotion_flow(run, driver):
    """apply -> gate -> finish, for promotion ``run``."""
    return linear_flow.Flow("promotion-%s" % run.id).add(
        Apply(run, driver),
        Gate(run, driver),
        Finish(run, P.COMPLETE, ["passed"]),
    )


def get_promotion_rollback_flow(run, driver):
    """undo -> finish, for the rollback of promotion ``run``."""
    return linear_flow.Flow("promotion-rollback-%s" % run.id).add(
        Undo(run, driver),
        Finish(run, P.ROLLED_BACK, ["undone"]),
    )
