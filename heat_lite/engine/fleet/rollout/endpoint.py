"""The rollouts' RPC endpoint (on the ``[engine] topic``): create, list,
show, delete, and the actions pause / resume / cancel / rollback.

Creating a rollout resolves its selector once (the targets are the
stacks matched now, in the query's stable order), stores it owned by
this engine and starts its flow here. An action is a conditional write
on the rollout's state (409 otherwise); the owner's flow sees it at its
next gate. A rollback of a finished rollout hands it to the keepers
(owner cleared), and this engine claims it at once.
"""

import collections
import uuid

import oslo_messaging as messaging

from heat_lite.common import exception, rollout_spec, states
from heat_lite.db import rollouts as db_rollouts
from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint import queries
from heat_lite.engine.endpoint.base import expected, find_stack
from heat_lite.engine.endpoint.views import timestamp
from heat_lite.engine.fleet.rollout import target as tgt
from heat_lite.engine.worker import caller

R = states.ROLLOUT
ACTIONS = ("pause", "resume", "cancel", "rollback")
# {action: (statuses it applies to, values it sets, flag it needs unset)}
_ACTIONS = {
    "pause": ((R.IN_PROGRESS,), {"status": R.PAUSED}, "cancel_requested"),
    "resume": ((R.PAUSED,), {"status": R.IN_PROGRESS}, None),
    "cancel": (
        R.ACTIVE,
        {"cancel_requested": True, "status": R.IN_PROGRESS},
        "cancel_requested",
    ),
    "rollback": (
        R.states,
        {"rollback_requested": True, "status": R.IN_PROGRESS},
        "rollback_requested",
    ),
}
_REASONS = {
    "pause": "Paused: no new batch starts",
    "resume": "Resumed",
    "cancel": "Cancelling: no new batch starts",
    "rollback": "Rolling back: every succeeded target goes back",
}


class RolloutEndpoint:
    """Rollout requests from the API (or any RPC client).

    :param runner: the process's ``fleet.rollout.runner.RolloutRunner``.
    """

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, runner):
        self.runner = runner
        # The check a target's update passes when its batch starts.
        self.goals = runner.driver.goals

    @expected
    def create_rollout(self, ctxt, body):
        spec = rollout_spec.parse(body)
        matched = queries.Query(spec["selector"], ctxt.project_id).run()
        if not matched:
            raise exception.InvalidRollout(
                reason="the selector matches no stack"
            )
        self._check_targets(ctxt, spec["update"], matched)
        rollout_id = str(uuid.uuid4())
        batches = rollout_spec.batches(len(matched), spec["strategy"])
        fence = self.runner.fence
        engine_id, epoch = fence.owner
        db_rollouts.rollout_create(
            {
                "id": rollout_id,
                "tenant": ctxt.project_id,
                "name": spec.pop("name"),
                "status": R.IN_PROGRESS,
                "status_reason": "Rollout started",
                "spec": spec,
                "caller_token": caller.keep(ctxt),
                "engine_id": engine_id,
                "epoch": epoch,
            },
            [
                {
                    "position": i,
                    "stack_id": s["id"],
                    "stack_name": s["stack_name"],
                    "batch": batches[i],
                }
                for i, s in enumerate(matched)
            ],
        )
        self.runner.launch(rollout_id)
        return self._view(ctxt, rollout_id)

    def _check_targets(self, ctxt, update, matched):
        """Refuse (400) an update that some target's template refuses: an
        undeclared parameter, a value its constraints refuse -- the check
        a target's update passes at its batch (``goals.UpdateGoals``),
        made now, so that a rollout is never stored to fail on every
        target. Whether each stack may start an update is left to its
        batch (a busy one is skipped then).

        :raises InvalidRollout: naming the target and what it refused.
        """
        args = {"clear_parameters": update.get("clear_parameters")}
        for row in matched:
            try:
                stack = find_stack(ctxt, {"stack_id": row["id"]}, live=True)
            except exception.StackNotFound:
                continue  # gone since the query: its target is skipped
            try:
                self.goals.goal(
                    ctxt,
                    stack,
                    update.get("template"),
                    update.get("parameters"),
                    update.get("files"),
                    update.get("environment"),
                    None,
                    args,
                    True,
                )
            except exception.Invalid as exc:
                raise exception.InvalidRollout(
                    reason="target stack %s (%s) refuses the update: %s"
                    % (stack["name"], stack["id"], exc)
                ) from None

    @expected
    def list_rollouts(self, ctxt, limit=None, marker=None):
        rows = db_rollouts.rollout_get_all(ctxt.project_id, limit, marker)
        targets = db_rollouts.targets_get([r["id"] for r in rows])
        return [view(r, targets[r["id"]], detail=False) for r in rows]

    @expected
    def show_rollout(self, ctxt, rollout_id):
        return self._view(ctxt, rollout_id)

    @expected
    def delete_rollout(self, ctxt, rollout_id):
        if not db_rollouts.rollout_delete(rollout_id, ctxt.project_id):
            rollout = db_rollouts.rollout_get(rollout_id, ctxt.project_id)
            raise exception.RolloutStateConflict(
                rollout=rollout_id, status=rollout["status"], action="delete"
            )

    @expected
    def rollout_action(self, ctxt, rollout_id, action):
        if action not in _ACTIONS:
            raise exception.InvalidRollout(
                reason="action must be one of %s" % ", ".join(ACTIONS)
            )
        statuses, values, unless = _ACTIONS[action]
        values = dict(values, status_reason=_REASONS[action])
        finished = None
        if action == "rollback":
            finished = db_rollouts.rollout_get(rollout_id, ctxt.project_id)
            if finished["status"] in R.FINISHED:
                values.update(engine_id=None, epoch=None, finished_at=None)
        if not db_rollouts.rollout_request(
            rollout_id, ctxt.project_id, statuses, values, unless
        ):
            rollout = db_rollouts.rollout_get(rollout_id, ctxt.project_id)
            raise exception.RolloutStateConflict(
                rollout=rollout_id, status=_state(rollout), action=action
            )
        if finished is not None and finished["status"] in R.FINISHED:
            self.runner.take_over()
        return self._view(ctxt, rollout_id)

    def _view(self, ctxt, rollout_id):
        rollout = db_rollouts.rollout_get(rollout_id, ctxt.project_id)
        targets = db_rollouts.targets_get([rollout_id])[rollout_id]
        return view(rollout, targets)


def _state(rollout):
    if rollout["rollback_requested"]:
        return (
            "rolling back" if rollout["finished_at"] is None else "rolled back"
        )
    if rollout["cancel_requested"] and rollout["finished_at"] is None:
        return "cancelling"
    return rollout["status"]


def view(rollout, targets, detail=True):
    """The API's rollout dict (``targets`` in position order)."""
    counts = collections.Counter(t["status"] for t in targets)
    result = {
        "id": rollout["id"],
        "name": rollout["name"],
        "status": rollout["status"],
        "status_reason": rollout["status_reason"],
        "strategy": rollout["spec"]["strategy"],
        "created_at": timestamp(rollout["created_at"]),
        "updated_at": timestamp(rollout["updated_at"]),
        "finished_at": timestamp(rollout["finished_at"]),
        "counts": {s: counts.get(s, 0) for s in tgt.STATES},
    }
    if detail:
        result["selector"] = rollout["spec"]["selector"]
        result["verify"] = rollout["spec"]["verify"]
        result["targets"] = [
            {
                "stack_id": t["stack_id"],
                "stack_name": t["stack_name"],
                "batch": t["batch"],
                "status": t["status"],
                "status_reason": t["status_reason"],
                "started_at": timestamp(t["started_at"]),
                "finished_at": timestamp(t["finished_at"]),
            }
            for t in targets
        ]
    return result
