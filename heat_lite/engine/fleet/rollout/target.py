"""One target of a rollout: its verified update, followed to the end,
and (when the whole rollout is rolled back) its update back.

The update is a PATCH of the stack with the rollout's ``update`` and
``verify``, made with rollback enabled; ``engine.verify`` decides it and
rolls the stack back (reviving its replaced records) when it fails. The
rollout never supersedes an operation it did not start: the stack must
not be IN_PROGRESS, and the update starts only from the traversal seen
(a conditional write), else the target is SKIPPED.

No target is updated twice. The traversal id is chosen and recorded on
the target *before* the update starts; a resumed flow (another engine,
after a crash) finds it and follows that update if it started (its
``verification`` row exists, written in the same transaction as the
traversal) or starts it under the same id if it did not. The update back
is recorded the same way; it carries no verification, so it counts as
started when the stack was updated after it was recorded, and is then
only followed.
"""

import concurrent.futures
import json
import logging
import time
import uuid

from heat_lite.common import exception, states
from heat_lite.common.states import Status
from heat_lite.db import api as db_api
from heat_lite.db import image_holds, models, verifications
from heat_lite.db import rollouts as db_rollouts
from heat_lite.db import stacks as db_stacks
from heat_lite.engine.fleet.keeper import OwnershipLost
from heat_lite.engine.traversal import ops as traversal_ops
from heat_lite.engine.traversal import verify

LOG = logging.getLogger(__name__)

T = states.ROLLOUT_TARGET
V = states.VERIFICATION
PENDING, UPDATING, VERIFYING = T.PENDING, T.UPDATING, T.VERIFYING
SUCCEEDED, ROLLING_BACK, ROLLED_BACK = (
    T.SUCCEEDED,
    T.ROLLING_BACK,
    T.ROLLED_BACK,
)
FAILED, SKIPPED = T.FAILED, T.SKIPPED
STATES = T.states
TERMINAL = T.TERMINAL
FAILURES = T.FAILURES
# What an outcome (``verify.outcome``) of the update means for the target.
_OUTCOME = {
    V.UPDATING: UPDATING,
    V.VERIFYING: VERIFYING,
    V.CLEANING_UP: VERIFYING,
    V.SUCCEEDED: SUCCEEDED,
    V.ROLLING_BACK: ROLLING_BACK,
    V.ROLLED_BACK: ROLLED_BACK,
    V.FAILED: FAILED,
    V.DELETED: SKIPPED,
    # Verified, then a newer operation took the cleanup over: the stack
    # runs the new version.
    V.SUPERSEDED_AFTER_PASS: SUCCEEDED,
    # Taken over before it passed: the rollout never supersedes an update,
    # so someone else did, and this target's upgrade is not known good.
    V.SUPERSEDED: FAILED,
}


#: The probe of a stack that is deleted (or gone).
GONE = ("GONE",)
# Seconds a followed update goes at most without its outcome read again,
# even though its stack looks unchanged.
LONGEST = 5.0
# Updates of one batch started at the same time at most (each is a few
# statements, most of the time spent in the database).
START_WORKERS = 8


class _Followed:
    """A target whose update is followed: its row (as written), the
    status written last, and its stack's last probe and when it was
    taken (monotonic)."""

    __slots__ = ("target", "seen", "probe", "read_at")

    def __init__(self, target):
        self.target = target
        self.seen = target["status"]
        self.probe = None
        self.read_at = float("-inf")


class TargetDriver:
    """Runs targets' updates for the rollouts of one engine process.

    :param ops: the process's ``StackOps``.
    :param goals: ``endpoint.goals.UpdateGoals``: checks each target's
        update request as ``update_stack`` does (``check`` returns
        (stack, template, env, files, bound)).
    :param poll: seconds between two looks at running updates.
    """

    def __init__(self, ops, goals, poll=0.5):
        self.ops = ops
        self.goals = goals
        self.poll = poll

    # Forward -------------------------------------------------------------
    def update(self, run, positions):
        """Update the targets at ``positions`` of ``run`` (or follow the
        updates they started before) until every one is over.

        The updates are started ``START_WORKERS`` at a time, then followed
        together in this thread: every ``poll`` seconds one query reads
        all their stacks (``db.rollouts.stack_probes``), and a target
        reads what became of its update (``verify.outcome``) only when its
        stack's state or reason changed, and at least every ``LONGEST``
        seconds. (A thread per target, each polling its stack, cost more
        engine CPU than the updates themselves.)

        :raises OwnershipLost: at once. Any other error of one target is
            raised once the others are over.
        """
        errors = []

        def begin(position):
            try:
                return self._begin(run, position)
            except OwnershipLost:
                raise
            except Exception as exc:  # noqa: BLE001 - raised below
                errors.append(exc)
                return None

        width = min(len(positions), START_WORKERS)
        if width <= 1:
            begun = [begin(p) for p in positions]
        else:
            with concurrent.futures.ThreadPoolExecutor(
                width, thread_name_prefix="heat-lite-rollout-%s" % run.id[:8]
            ) as pool:
                begun = list(pool.map(begin, positions))
        followed = [f for f in begun if isinstance(f, _Followed)]
        self._follow(run, followed, errors)
        if errors:
            raise errors[0]

    def _begin(self, run, position):
        """Start a target's update; its final status if it is over (or
        did not start), else its ``_Followed``."""
        target = db_rollouts.target_get(run.id, position)
        if target["status"] in TERMINAL:
            return target["status"]
        traversal = target["traversal_id"]
        if traversal is None or not _started(traversal):
            started = self._start(run, target, traversal or str(uuid.uuid4()))
            if isinstance(started, str):
                return started
            target = started
        return _Followed(target)

    def _start(self, run, target, traversal):
        """Start the update: the target's row as written, or its final
        status if the update did not start."""
        update = run.spec["update"]
        try:
            stack, template, env, files, bound = self.goals.check(
                run.context,
                {"stack_id": target["stack_id"]},
                update.get("template"),
                update.get("parameters"),
                update.get("files"),
                update.get("environment"),
                None,
                {"clear_parameters": update.get("clear_parameters")},
                True,
            )
        except (exception.StackNotFound, exception.NotSupported) as exc:
            return self._finish(run, target, SKIPPED, str(exc))
        except exception.HeatLiteException as exc:
            return self._finish(
                run, target, FAILED, "update refused: %s" % exc
            )
        if stack["status"] == Status.IN_PROGRESS:
            return self._finish(run, target, SKIPPED, _busy(stack))
        previous = db_api.raw_template_get(stack["raw_template_id"])
        values = {
            "status": UPDATING,
            "status_reason": "update started",
            "traversal_id": traversal,
            "previous": json.dumps(
                {k: previous[k] for k in ("template", "environment", "files")}
            ),
            "started_at": models.utcnow(),
        }
        self._write(run, target, values, (PENDING, UPDATING))
        run.check()
        _hold_previous_images(run, target["stack_id"])
        started = self.ops.start(
            stack,
            "UPDATE",
            bound,
            new_template=(template, env, files),
            extra={"disable_rollback": False},
            retry=False,
            caller_token=run.caller_token,
            verify=run.spec["verify"],
            traversal=traversal,
        )
        if started is None:
            return self._finish(
                run, target, SKIPPED, "another operation started on the stack"
            )
        return dict(target, **values)

    def _follow(self, run, followed, errors):
        """Follow the updates until all are over (``update``)."""
        while followed:
            looked = time.monotonic()
            probes = db_rollouts.stack_probes(
                [f.target["stack_id"] for f in followed]
            )
            run.check()
            for f in list(followed):
                probe = probes.get(f.target["stack_id"], GONE)
                if probe == f.probe and looked - f.read_at < LONGEST:
                    continue
                f.probe, f.read_at = probe, looked
                try:
                    over = self._step(run, f)
                except OwnershipLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - raised later
                    errors.append(exc)
                    over = True
                if over:
                    followed.remove(f)
            if followed:
                time.sleep(max(0.0, self.poll - (time.monotonic() - looked)))

    def _step(self, run, f):
        """What became of one followed update since its stack's probe
        ``f.probe``: True once it is over (its final status written)."""
        target = f.target
        if f.probe == GONE:
            outcome = {"state": "DELETED", "reason": "stack deleted"}
        else:
            outcome = verify.outcome(
                target["stack_id"],
                target["traversal_id"],
                stack=_probed(f.probe),
            )
        status = _OUTCOME[outcome["state"]]
        reason = outcome["reason"]
        if outcome["state"] == V.SUPERSEDED:
            reason = "superseded by another operation: %s" % (reason or "")
        elif outcome["state"] == V.SUPERSEDED_AFTER_PASS:
            reason = "%s; then another operation took the stack over" % (
                reason
            )
        if status in TERMINAL:
            self._finish(run, target, status, reason)
            return True
        if status != f.seen:
            # On a change of state only: a reason of its own (the
            # stack's, then the checks') would cost a write each.
            self._write(
                run, target, {"status": status, "status_reason": reason}
            )
            f.seen = status
        return False

    # Back ------------------------------------------------------------------
    def revert(self, run, position):
        """Update a SUCCEEDED target back to its previous template (the
        whole rollout is rolled back); returns its final status."""
        target = db_rollouts.target_get(run.id, position)
        if target["revert_traversal_id"] is None:
            if target["status"] != SUCCEEDED:
                return target["status"]
            traversal = str(uuid.uuid4())
            self._write(
                run,
                target,
                {
                    "status": ROLLING_BACK,
                    "status_reason": "rollout rolled back",
                    "revert_traversal_id": traversal,
                    "revert_marked_at": models.utcnow(),
                },
                (SUCCEEDED,),
            )
            target = db_rollouts.target_get(run.id, position)
        elif target["status"] in TERMINAL:
            return target["status"]
        return self._follow_back(run, target)

    def _follow_back(self, run, target):
        traversal = target["revert_traversal_id"]
        while True:
            run.check()
            try:
                stack = db_api.stack_get(
                    target["stack_id"], show_deleted=False
                )
            except exception.StackNotFound:
                return self._finish(run, target, SKIPPED, "stack deleted")
            current = stack["current_traversal"]
            if current == traversal:
                if stack["status"] == Status.COMPLETE:
                    return self._finish(
                        run,
                        target,
                        ROLLED_BACK,
                        "back on its previous template",
                    )
            elif traversal_ops.end_of(traversal, current, stack["status"]):
                # The update back failed (or was cancelled); whatever
                # its own rollback does, the stack is not back.
                return self._finish(
                    run,
                    target,
                    FAILED,
                    "rollback: %s" % stack["status_reason"],
                )
            elif stack["updated_at"] < target["revert_marked_at"]:
                final = self._start_back(run, target, stack, traversal)
                if final is not None:
                    return final
            else:
                return self._finish(
                    run,
                    target,
                    FAILED,
                    "not rolled back: another operation took the stack over",
                )
            time.sleep(self.poll)

    def _start_back(self, run, target, stack, traversal):
        if stack["status"] == Status.IN_PROGRESS:
            return self._finish(
                run, target, FAILED, "not rolled back: " + _busy(stack)
            )
        previous = json.loads(target["previous"])
        try:
            stack, template, env, files, bound = self.goals.check(
                run.context,
                {"stack_id": stack["id"]},
                previous["template"],
                None,
                previous["files"],
                previous["environment"],
                None,
                {},
                False,
            )
        except exception.HeatLiteException as exc:
            return self._finish(
                run, target, FAILED, "not rolled back: %s" % exc
            )
        started = self.ops.start(
            stack,
            "UPDATE",
            bound,
            new_template=(template, env, files),
            retry=False,
            caller_token=run.caller_token,
            traversal=traversal,
        )
        if started is None:
            return self._finish(
                run,
                target,
                FAILED,
                "not rolled back: another operation started on the stack",
            )
        return None

    # Writes ----------------------------------------------------------------
    @staticmethod
    def _write(run, target, values, statuses=None):
        if not db_rollouts.target_update_owned(
            run.id, target["position"], run.owner, values, statuses
        ):
            raise OwnershipLost(run.id)

    def _finish(self, run, target, status, reason):
        LOG.info(
            "Rollout %s: stack %s %s (%s)",
            run.id,
            target["stack_id"],
            status,
            reason,
        )
        self._write(
            run,
            target,
            {
                "status": status,
                "status_reason": reason,
                "finished_at": models.utcnow(),
            },
        )
        return status


def _started(traversal):
    """True if the verified update ``traversal`` was started (its
    verification row is written with the traversal)."""
    return verifications.verification_get(traversal) is not None


def _probed(probe):
    """The stack columns ``verify.outcome`` reads, from a probe of a live
    stack (``db.rollouts.stack_probes``)."""
    traversal, action, status, reason = probe
    return {
        "current_traversal": traversal,
        "action": action,
        "status": status,
        "status_reason": reason,
        "deleted_at": None,
    }


def _busy(stack):
    return (
        "stack is %s_IN_PROGRESS, an operation the rollout did not start"
        % stack["action"]
    )


def _hold_previous_images(run, stack_id):
    """The images the target runs before its update are what a rollback
    of the rollout brings back (even long after it finished): image
    retention keeps them while the rollout exists and is not rolled
    back. Idempotent: a resumed flow holds them again, once."""
    nested = [s["id"] for _, s in db_stacks.stack_descendants([stack_id])]
    image_holds.hold_stack_images(
        run.context.project_id, [stack_id, *nested], "rollout", run.id
    )
