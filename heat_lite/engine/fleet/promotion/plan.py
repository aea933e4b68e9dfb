"""A promotion resolved before anything changes: the source's snapshot,
the target's goal, and every refusal.

``plan`` runs in the call that creates the promotion, so that its
refusals are the call's answer: the source not found (404), the source
not COMPLETE or the target busy (409), the overlay naming a parameter
the template does not declare (400). The snapshot -- the source's last
COMPLETE template, files and environment -- is copied into the
promotion's row: the source's template row may be purged once the
source is updated again, and the promotion must apply what was tested.
"""

import hashlib
import json
import re
import uuid

from heat_lite.common import exception, promotion_spec
from heat_lite.common.states import Status
from heat_lite.db import api as db_api
from heat_lite.db import promotions as db_promotions
from heat_lite.engine import validation
from heat_lite.engine.endpoint import goals

_UUID_RE = re.compile(r"^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$")


def find(project, ref):
    """The live stack ``ref`` (an id or a name) of ``project``, or None."""
    if _UUID_RE.match(ref):
        try:
            return db_api.stack_get(ref, tenant=project, show_deleted=False)
        except exception.StackNotFound:
            pass
    try:
        return db_api.stack_get_by_name(project, ref)
    except exception.StackNotFound:
        return None


def digest(template):
    """The sha256 of a template, over its canonical JSON text."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _source(ctxt, spec):
    source = find(ctxt.project_id, spec["source"]["stack"])
    if source is None or source["owner_id"]:
        raise exception.StackNotFound(name=spec["source"]["stack"])
    if source["status"] != Status.COMPLETE or source["action"] in (
        "DELETE",
        "SUSPEND",
    ):
        raise exception.PromotionConflict(
            reason="the source stack %s is %s_%s, not COMPLETE"
            % (source["name"], source["action"], source["status"])
        )
    return source


def _busy(target):
    if target["status"] == Status.IN_PROGRESS:
        return "the target stack %s is %s_IN_PROGRESS" % (
            target["name"],
            target["action"],
        )
    running = db_promotions.promotion_active_for(target["id"])
    if running is not None:
        return "promotion %s into stack %s is running" % (
            running,
            target["name"],
        )
    return None


def plan(ctxt, target_ctxt, spec):
    """Resolve a checked request (``promotion_spec.parse``).

    :param ctxt: the caller, in the source's project.
    :param target_ctxt: the caller in the target's project.
    :returns: the promotion row's values (no id, owner or status yet).
    :raises StackNotFound, PromotionConflict, InvalidPromotion, and the
        400s of binding the goal.
    """
    return resolve(ctxt, target_ctxt, spec)[0]


def resolve(ctxt, target_ctxt, spec):
    """``plan``, and the target's goal as a BoundTemplate (what a dry
    run compares with the target's present; ``promotion_preview``).

    :returns: (the promotion row's values, the goal's BoundTemplate,
        the target stack's row or None when the promotion creates it).
    """
    validation.environment(spec["environment"], spec["parameters"])  # 400s
    source = _source(ctxt, spec)
    raw = db_api.raw_template_get(source["raw_template_id"])
    declared = (raw["template"].get("parameters") or {}).keys()
    env = promotion_spec.overlay(raw["environment"], spec, declared)
    snapshot = {
        "template": raw["template"],
        "files": raw["files"],
        "environment": env,
    }
    target_ref = spec["target"]["stack"]
    target = find(target_ctxt.project_id, target_ref)
    if target is not None and target["id"] == source["id"]:
        raise exception.InvalidPromotion(
            reason="source and target are the same stack"
        )
    args = {"verify": spec["verify"]}
    values = {
        "tenant": ctxt.project_id,
        "target_tenant": target_ctxt.project_id,
        "username": ctxt.user_id,
        "source_stack_id": source["id"],
        "source_stack_name": source["name"],
        "source_template_id": source["raw_template_id"],
        "source_template_sha256": digest(raw["template"]),
    }
    spec = dict(spec, snapshot=snapshot)
    if target is None:
        stack_id = str(uuid.uuid4())
        stack_values, _env, bound = goals.new_stack(
            target_ctxt,
            target_ref,
            snapshot["template"],
            None,
            snapshot["files"],
            env,
            None,
            args,
            stack_id,
        )
        spec["stack_values"] = stack_values
        created = dict(
            values,
            spec=spec,
            target_stack_id=stack_id,
            target_stack_name=target_ref,
            created_target=True,
            previous=None,
        )
        return created, bound, None
    busy = _busy(target)
    if busy is not None:
        raise exception.PromotionConflict(reason=busy)
    _stack, _t, _e, _f, bound = goals.UpdateGoals().check(
        target_ctxt,
        {"stack_id": target["id"]},
        snapshot["template"],
        None,
        snapshot["files"],
        env,
        None,
        args,
        False,
    )
    before = db_api.raw_template_get(target["raw_template_id"])
    updated = dict(
        values,
        spec=spec,
        target_stack_id=target["id"],
        target_stack_name=target["name"],
        created_target=False,
        previous={k: before[k] for k in ("template", "environment", "files")},
    )
    return updated, bound, target
