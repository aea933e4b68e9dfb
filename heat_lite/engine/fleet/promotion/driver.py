"""What a promotion does to its target stack: apply the snapshot (create
the stack, or update it in place), follow the gate, and undo it (delete a
stack the promotion created, or update it back onto what it had).

Nothing is started twice. Each operation's traversal id is chosen and
recorded on the promotion row (with the time) *before* it starts; a
resumed flow (another engine, after a kill -9) finds it and follows that
operation if it started -- its verification row exists, the stack runs
or ran it, the stack row was created -- or starts it under the same id
if it did not. Every write is conditional on the owner (``PromotionRun``).
"""

import logging
import time
import uuid

from heat_lite.common import context, crypt, exception
from heat_lite.common.states import PROMOTION, Action, Status
from heat_lite.common.states import VERIFICATION as V
from heat_lite.db import api as db_api
from heat_lite.db import image_holds, models, verifications
from heat_lite.db import promotions as db_promotions
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import trusts, validation
from heat_lite.engine.fleet import keeper
from heat_lite.engine.traversal import verify

LOG = logging.getLogger(__name__)
OWNER_CHECK = 0.5


class GateFailed(Exception):
    """The target's operation did not succeed: the flow reverts."""


class PromotionRun:
    """The owner-side state of one promotion (row re-read on demand)."""

    def __init__(self, row, fence):
        self.id = row["id"]
        self.row = row
        self.fence = fence
        self.owner = fence.owner
        self.generation = fence.generation
        self.verify = row["spec"]["verify"]
        roles = list(row["spec"].get("roles") or ())
        self.context = context.RequestContext(
            project_id=row["target_tenant"],
            user_id=row["username"],
            roles=roles,
            is_admin="admin" in roles,
            auth_token=_plain(row["caller_token"]),
            overwrite=False,
        )
        self._checked = 0.0

    def check(self):
        """:raises OwnershipLost: once this engine no longer owns it."""
        if self.fence.generation != self.generation:
            keeper.hold(self.fence)
            raise keeper.OwnershipLost(self.id)
        if time.monotonic() - self._checked < OWNER_CHECK:
            return
        self._checked = time.monotonic()
        if not db_promotions.promotion_owned(self.id, self.owner):
            raise keeper.OwnershipLost(self.id)

    def reload(self):
        self.row = db_promotions.promotion_get(self.id)
        return self.row

    def write(self, **values):
        if not db_promotions.promotion_update_owned(
            self.id, self.owner, values
        ):
            raise keeper.OwnershipLost(self.id)

    def settle(self, status, reason):
        """The promotion's end: ``status`` with ``reason``. COMPLETE
        overtakes the older promotions of the target (they can never roll
        back again): their image holds go in the same write."""
        LOG.info("Promotion %s %s: %s", self.id, status, reason)
        if not db_promotions.promotion_settle(
            self.id,
            self.owner,
            {
                "status": status,
                "status_reason": reason,
                "finished_at": models.utcnow(),
            },
        ):
            raise keeper.OwnershipLost(self.id)
        if status in PROMOTION.UNDONE:
            # Undone: nothing can roll back to the target's old images
            # through it any more (its records name them again).
            image_holds.release("promotion", self.id)


def _plain(token):
    if not token:
        return None
    try:
        return crypt.decrypt(token)
    except crypt.Unreadable:
        return None


class PromotionDriver:
    """Acts on promotions' targets for one engine process.

    :param ops: the process's ``StackOps``.
    :param goals: ``endpoint.goals.UpdateGoals``: checks an update of the
        target as ``update_stack`` does.
    :param poll: seconds between two looks at a running operation (a
        look is three reads; a hundred promotions at once make that
        many pollers).
    """

    def __init__(self, ops, goals, poll=2.0):
        self.ops = ops
        self.goals = goals
        self.poll = poll

    # Apply -----------------------------------------------------------------
    def apply(self, run):
        """Start the promotion's operation on the target (once); returns
        its traversal id."""
        row = run.reload()
        traversal = row["traversal_id"]
        if traversal is None:
            traversal = str(uuid.uuid4())
            run.write(traversal_id=traversal, marked_at=models.utcnow())
            row = run.reload()
        elif self._started(run, row, traversal, row["marked_at"]):
            return traversal
        run.check()
        if row["created_target"]:
            self._create(run, row, traversal)
        else:
            self._hold_previous_images(run, row)
            self._update(run, row, traversal, row["spec"]["snapshot"])
        return traversal

    @staticmethod
    def _hold_previous_images(run, row):
        """The images the target runs now are what a rollback of this
        promotion brings back: image retention keeps them while it can."""
        target = row["target_stack_id"]
        nested = [s["id"] for _, s in db_stacks.stack_descendants([target])]
        image_holds.hold_stack_images(
            run.context.project_id, [target, *nested], "promotion", run.id
        )

    @staticmethod
    def _started(run, row, traversal, marked_at):
        """True if the operation ``traversal`` recorded at ``marked_at``
        was started (a verified one has its verification row)."""
        try:
            stack = db_api.stack_get(row["target_stack_id"])
        except exception.StackNotFound:
            return False
        if stack["current_traversal"] == "":
            return False  # created, its traversal not started yet
        if run.verify and verifications.verification_get(traversal):
            return True
        updated = stack["updated_at"]
        return stack["current_traversal"] == traversal or (
            updated is not None and updated >= marked_at
        )

    def _create(self, run, row, traversal):
        snap = row["spec"]["snapshot"]
        values = dict(row["spec"]["stack_values"])
        info = {
            "name": values["name"],
            "id": values["id"],
            "project_id": values["tenant"],
        }
        bound = validation.bind(
            snap["template"], snap["environment"], snap["files"], info
        )
        try:
            stack = db_api.stack_get(values["id"])
        except exception.StackNotFound:
            values["trust_id"] = trusts.create(run.context)
            stack = db_api.stack_create(
                values, snap["template"], snap["environment"], snap["files"]
            )
        started = self.ops.start(
            stack,
            "CREATE",
            bound,
            goal_template_id=stack["raw_template_id"],
            retry=False,
            caller_token=row["caller_token"],
            verify=run.verify,
            traversal=traversal,
        )
        if started is None:
            raise GateFailed("another operation started on the new stack")

    def _update(self, run, row, traversal, goal):
        try:
            stack, template, env, files, bound = self.goals.check(
                run.context,
                {"stack_id": row["target_stack_id"]},
                goal["template"],
                None,
                goal["files"],
                goal["environment"],
                None,
                {},
                False,
            )
        except exception.HeatLiteException as exc:
            raise GateFailed("update refused: %s" % exc) from None
        if stack["status"] == Status.IN_PROGRESS:
            raise GateFailed(
                "the target is %s_IN_PROGRESS, an operation the "
                "promotion did not start" % stack["action"]
            )
        started = self.ops.start(
            stack,
            "UPDATE",
            bound,
            new_template=(template, env, files),
            extra={"disable_rollback": False},
            retry=False,
            caller_token=row["caller_token"],
            verify=run.verify,
            traversal=traversal,
        )
        if started is None:
            raise GateFailed("another operation started on the target")

    # The gate --------------------------------------------------------------
    def gate(self, run, traversal):
        """Follow the operation to its end; returns the reason it passed.

        :raises GateFailed: with the reason, if it did not succeed.
        """
        stack_id = run.row["target_stack_id"]
        while True:
            run.check()
            found = verify.outcome(
                stack_id, traversal, verified=bool(run.verify)
            )
            state, reason = found["state"], found["reason"]
            if state == V.SUCCEEDED:
                return reason or "the target reached COMPLETE"
            if state in (V.ROLLED_BACK, V.FAILED, V.DELETED, V.SUPERSEDED):
                text = "%s: %s" % (state.lower().replace("_", " "), reason)
                raise GateFailed(text)
            time.sleep(self.poll)

    # Undo ------------------------------------------------------------------
    def undo(self, run, after_failure=False):
        """Put the target back as it was before the promotion: delete it
        if the promotion created it, else update it onto ``previous``
        (verified again when the promotion had a gate). After a failed
        gate an update has rolled itself back already: nothing to do."""
        row = run.reload()
        if row["created_target"]:
            return self._delete(run, row)
        if after_failure:
            return "the target rolled back to its previous template"
        traversal = row["revert_traversal_id"]
        if traversal is None:
            traversal = str(uuid.uuid4())
            run.write(
                revert_traversal_id=traversal,
                revert_marked_at=models.utcnow(),
            )
            row = run.reload()
            self._update(run, row, traversal, row["previous"])
        elif not self._started(run, row, traversal, row["revert_marked_at"]):
            self._update(run, row, traversal, row["previous"])
        return self.gate(run, traversal)

    def _delete(self, run, row):
        traversal = row["revert_traversal_id"]
        if traversal is None:
            traversal = str(uuid.uuid4())
            run.write(
                revert_traversal_id=traversal,
                revert_marked_at=models.utcnow(),
            )
        while True:
            run.check()
            try:
                stack = db_api.stack_get(row["target_stack_id"])
            except exception.StackNotFound:
                return "the stack it created is deleted"
            if stack["deleted_at"] is not None:
                return "the stack it created is deleted"
            deleting = stack["action"] == Action.DELETE
            if deleting and stack["status"] == Status.FAILED:
                raise GateFailed("delete failed: %s" % stack["status_reason"])
            if not deleting and stack["status"] != Status.IN_PROGRESS:
                self.ops.start(
                    stack, Action.DELETE, caller_token=row["caller_token"]
                )
            time.sleep(self.poll)
