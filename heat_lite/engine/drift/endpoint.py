"""The drift calls of the ``[engine] topic``: start a detection (checked
here, run on a worker through a ``detect_drift`` cast) and show the last
one."""

import uuid

from heat_lite.common import exception
from heat_lite.common.states import Status
from heat_lite.db import drift as db_drift
from heat_lite.engine import rpcapi
from heat_lite.engine.drift import compare
from heat_lite.engine.endpoint.base import TARGET, expected, find_stack

# A detection still running after this many seconds is taken to be lost
# with its engine: a new request may start another.
STALE_SECONDS = 600


def _when(value):
    return value.isoformat() if value is not None else None


class DriftEndpoint:
    """``detect_drift`` and ``show_drift``."""

    target = TARGET

    def __init__(self, worker_api=None):
        self._worker_api = worker_api

    @property
    def worker_api(self):
        if self._worker_api is None:
            self._worker_api = rpcapi.WorkerAPI()
        return self._worker_api

    @expected
    def detect_drift(self, ctxt, stack_identity):
        """Start a detection of the stack's drift.

        :raises StackNotFound: (404).
        :raises ActionInProgress: (409) the stack has an operation in
            progress (its records are moving).
        :raises DriftDetectionInProgress: (409) one is already running.
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        if stack["status"] == Status.IN_PROGRESS:
            raise exception.ActionInProgress(
                stack_name=stack["name"], action=stack["action"]
            )
        detection = str(uuid.uuid4())
        if not db_drift.drift_start(
            stack["id"], stack["tenant"], detection, STALE_SECONDS
        ):
            raise exception.DriftDetectionInProgress(stack_name=stack["name"])
        self.worker_api.detect_drift(ctxt, stack["id"], detection)
        return {"detection": detection}

    @expected
    def show_drift(self, ctxt, stack_identity):
        """The stack's last drift report.

        :raises StackNotFound, DriftNotDetected: (404).
        """
        stack = find_stack(ctxt, stack_identity, live=True)
        row = db_drift.drift_get(stack["id"])
        if row is None:
            raise exception.DriftNotDetected(stack_name=stack["name"])
        report = row["report"]
        return {
            "stack_id": stack["id"],
            "stack_name": stack["name"],
            "drift_status": row["status"],
            "drift_status_reason": row["status_reason"],
            "detection_started_at": _when(row["started_at"]),
            # While a detection runs, the report (and its time) is the
            # previous one's, if any.
            "detected_at": _when(row["detected_at"]),
            "counts": compare.counts(report),
            "resources": report,
        }
