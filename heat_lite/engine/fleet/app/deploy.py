"""A build's image deployed to its branch's stack (doc/specs/apps.md).

The template version is the app's template and files with its
environment's parameters set: the image parameter to the build's image,
and ``source_commit`` and ``heat_lite_build`` (declared as string
parameters when the app's template does not declare them), so the stack
shows the commit and the build it runs -- and a rollback puts back the
previous ones with the previous image. The branch's stack is created on
its first build, and updated by the later ones as a verified update
(``traversal.verify``, the app's ``verify`` document) with rollback on:
a failed verification puts the stack back onto the previous image and
the build is REJECTED with the reason.

Nothing is started twice: the traversal id (and the stack id of a
create) is recorded on the build before the operation starts, so a build
taken over by another engine recognises its operation and follows it,
or starts it under the same id if it had not started.
"""

import copy
import time
import uuid

from heat_lite.common import app_spec, exception
from heat_lite.common.states import VERIFICATION as V
from heat_lite.common.states import Action, Status
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import stacks as db_stacks
from heat_lite.db import trusts as db_trusts
from heat_lite.db import verifications
from heat_lite.engine import trusts
from heat_lite.engine.endpoint import goals as goals_mod
from heat_lite.engine.traversal import ops as ops_mod
from heat_lite.engine.traversal import verify

# Parameters every template version of an app carries.
MARKS = ("source_commit", "heat_lite_build")
FAIL = "FAIL"


class DeployFailed(exception.HeatLiteException):
    msg_fmt = "%(message)s"


def version(app, build):
    """(template, environment, files) of the build's template version."""
    spec = app["spec"]
    template = copy.deepcopy(spec["template"])
    declared = template.setdefault("parameters", {})
    for name in MARKS:
        declared.setdefault(
            name, {"type": "string", "default": "", "label": name}
        )
    env = copy.deepcopy(spec.get("environment") or {})
    params = env.setdefault("parameters", {})
    params[spec["image_parameter"]] = build["image_id"]
    params["source_commit"] = build["commit"]
    params["heat_lite_build"] = build["id"]
    return template, env, copy.deepcopy(spec.get("files") or {})


class Deployer:
    """Creates or updates the stacks of apps' branches.

    :param ops: the process's ``StackOps``.
    :param goals: ``endpoint.goals.UpdateGoals``.
    :param poll: seconds between two looks at the stack's operation.
    """

    def __init__(self, ops, goals, poll=1.0):
        self.ops = ops
        self.goals = goals
        self.poll = poll

    def deploy(self, run):
        """Start (once) and follow the build's stack operation to a final
        state of the build."""
        row = run.row
        traversal = row["traversal"]
        if traversal is None:
            traversal = str(uuid.uuid4())
            stack_id = self._stack_id(run)
            run.record(traversal=traversal, stack_id=stack_id)
            self._start(run)
        elif not self._started(run):
            self._start(run)
        self._follow(run)

    def _stack_id(self, run):
        name = self._name(run)
        try:
            return db_stacks.stack_get_by_name(run.row["tenant"], name)["id"]
        except exception.StackNotFound:
            return str(uuid.uuid4())

    def _name(self, run):
        spec = run.app["spec"]
        return app_spec.stack_name(
            run.app["name"], run.row["branch"], spec.get("stacks")
        )

    def _started(self, run):
        row = run.row
        try:
            stack = db_stacks.stack_get(row["stack_id"])
        except exception.StackNotFound:
            return False
        traversal = row["traversal"]
        if stack["current_traversal"] in ("", None):
            return False
        if run.app["spec"].get("verify") and verifications.verification_get(
            traversal
        ):
            return True
        current = stack["current_traversal"]
        return current == traversal or (
            ops_mod.end_of(traversal, current, stack["status"]) is not None
        )

    def _start(self, run):
        row, spec = run.row, run.app["spec"]
        template, env, files = version(run.app, row)
        args = {"verify": spec.get("verify"), "disable_rollback": False}
        checked = goals_mod.verify_document(args)
        try:
            stack = db_stacks.stack_get(row["stack_id"])
        except exception.StackNotFound:
            stack = None
        if stack is None or stack["current_traversal"] == "":
            self._create(run, stack, template, env, files, args, checked)
        else:
            self._update(run, template, env, files, args, checked)
        stack = db_stacks.stack_get(row["stack_id"])
        run.record(template_id=stack["raw_template_id"])
        run.log(
            "stack %s (%s): %s started"
            % (stack["name"], stack["id"], stack["action"])
        )

    def _create(self, run, stack, template, env, files, args, checked):
        row = run.row
        values, env, bound = goals_mod.new_stack(
            run.context,
            self._name(run),
            template,
            None,
            files,
            env,
            None,
            args,
            row["stack_id"],
        )
        if stack is None:
            # It acts as the app's creator: it borrows the app's trust.
            values["trust_id"] = trusts.lent(run.app.get("trust_id"))
            stack = db_stacks.stack_create(values, template, env, files)
        started = self.ops.start(
            stack,
            Action.CREATE,
            bound,
            goal_template_id=stack["raw_template_id"],
            retry=False,
            verify=checked,
            traversal=row["traversal"],
        )
        if started is None:
            raise DeployFailed(message="another operation took the new stack")

    def _update(self, run, template, env, files, args, checked):
        row = run.row
        stack, template, env, files, bound = self.goals.check(
            run.context,
            {"stack_id": row["stack_id"]},
            template,
            None,
            files,
            env,
            None,
            args,
            False,
        )
        if not stack.get("trust_id") and run.app.get("trust_id"):
            # An adopted stack made without a trust (noauth mode then):
            # the build's update acts through the app's.
            lent = trusts.lent(run.app["trust_id"])
            if db_trusts.stack_trust_set(stack["id"], lent):
                stack = dict(stack, trust_id=lent)
        if stack["status"] == Status.IN_PROGRESS:
            raise DeployFailed(
                message="stack %s is %s_IN_PROGRESS, an operation the "
                "build did not start" % (stack["name"], stack["action"])
            )
        started = self.ops.start(
            stack,
            Action.UPDATE,
            bound,
            new_template=(template, env, files),
            extra={"disable_rollback": False},
            retry=False,
            verify=checked,
            traversal=row["traversal"],
        )
        if started is None:
            raise DeployFailed(
                message="another operation started on the stack"
            )

    # Following -------------------------------------------------------------
    def _follow(self, run):
        verified = bool(run.app["spec"].get("verify"))
        stack_id, traversal = run.row["stack_id"], run.row["traversal"]
        while True:
            run.check()
            found = verify.outcome(stack_id, traversal, verified=verified)
            state, reason = found["state"], found["reason"]
            if state == V.VERIFYING and run.row["status"] == B.DEPLOYING:
                run.move(B.VERIFYING)
                run.log("verifying the stack")
            elif state in (V.SUCCEEDED, V.SUPERSEDED_AFTER_PASS):
                return self._end(run, B.DEPLOYED, state, reason or "deployed")
            elif state == V.ROLLED_BACK:
                return self._end(run, B.REJECTED, state, reason)
            elif state == V.FAILED:
                rejected = verified and self._failed_checks(traversal)
                status = B.REJECTED if rejected else B.FAILED
                return self._end(run, status, state, reason)
            elif state in (V.SUPERSEDED, V.DELETED):
                text = "the stack was %s: %s" % (state.lower(), reason)
                return self._end(run, B.FAILED, state, text)
            time.sleep(self.poll)

    @staticmethod
    def _failed_checks(traversal):
        row = verifications.verification_get(traversal)
        return row is not None and row.get("result") == FAIL

    @staticmethod
    def _end(run, status, state, reason):
        run.move(
            status,
            reason,
            verification={"status": state, "reason": reason},
        )

    def cancel(self, run):
        """Stop the build's stack operation, if it runs: an update rolls
        back, a create stops."""
        traversal, stack_id = run.row.get("traversal"), run.row.get("stack_id")
        if not traversal or not stack_id:
            return
        try:
            stack = db_stacks.stack_get(stack_id)
        except exception.StackNotFound:
            return
        if (
            stack["current_traversal"] != traversal
            or stack["status"] != Status.IN_PROGRESS
        ):
            return
        reason = "Build %s cancelled" % run.id
        if stack["action"] == Action.UPDATE:
            self.ops.rollback(
                stack,
                events=[
                    ops_mod.stack_event(
                        stack, stack["action"], Status.FAILED, reason
                    )
                ],
                running=True,
            )
        else:
            self.ops.cancel(stack, reason)
