"""A promotion's dry run: what it would change, with nothing changed.

``preview`` resolves the request exactly as creating the promotion does
(``promotion_plan.resolve``: the same refusals, 400/404/409, so a dry
run that passes is a promotion that would start) and compares the goal
with the target's present:

- ``parameters``: every parameter of the promoted template, its value in
  the target now (``current``; absent when the target does not exist or
  did not declare it) and after the promotion (``promoted``); hidden
  ones masked on both sides;
- ``dropped``: what the target's environment has now and the promotion
  would lose -- a promotion applies the source's environment with the
  request's overlay, so the target's own parameters and overlays that
  the new environment no longer names are gone afterwards;
- ``resources``: the names of the target's resources by what the update
  would do to them (the five lists of a stack update preview, decided as
  the worker decides: ``endpoint.preview.update_changes``); every
  resource is ``added`` when the promotion creates the target.
"""

from heat_lite.engine.endpoint import preview as stack_preview
from heat_lite.engine.endpoint.base import bound_template, records_by_name
from heat_lite.engine.fleet.promotion import plan as promotion_plan
from heat_lite.engine.template import parameters as params_mod

# Environment sections a promotion replaces wholesale, whose keys the
# target can lose.
_SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "parameter_merge_strategies",
)


def preview(ctxt, target_ctxt, spec, services):
    """The dry run of a checked request (``promotion_spec.parse``;
    ``services``: the plugins', see ``definitions.plugin_for``).

    :returns: {"source", "target", "template_changed", "parameters",
        "dropped", "resources", "verify"} (``client.preview`` shows it).
    :raises: what ``promotion_plan.plan`` raises.
    """
    values, goal, target = promotion_plan.resolve(ctxt, target_ctxt, spec)
    present = None if target is None else bound_template(target)
    previous = values["previous"] or {}
    new_env = values["spec"]["snapshot"]["environment"]
    return {
        "source": {
            "stack": values["source_stack_name"],
            "id": values["source_stack_id"],
            "project": values["tenant"],
        },
        "target": {
            "stack": values["target_stack_name"],
            "id": None if target is None else target["id"],
            "project": values["target_tenant"],
            "exists": target is not None,
        },
        "template_changed": (
            target is None
            or promotion_plan.digest(previous["template"])
            != values["source_template_sha256"]
        ),
        "parameters": _parameters(present, goal),
        "dropped": _dropped(
            previous.get("environment") or {}, new_env, _hidden(present)
        ),
        "resources": _resources(target, goal, present, services),
        "verify": spec["verify"],
    }


def _shown(bound, name):
    param = bound.template.parameters.get(name)
    if param is not None and param.hidden:
        return params_mod.HIDDEN_VALUE
    return bound.parameters.get(name)


def _parameters(present, goal):
    found = {}
    for name in goal.template.parameters:
        entry = {"promoted": _shown(goal, name)}
        if present is not None and name in present.template.parameters:
            entry["current"] = _shown(present, name)
            hidden = (
                present.template.parameters[name].hidden
                or goal.template.parameters[name].hidden
            )
            if hidden:
                # Masked on both sides, or the unmasked side tells.
                entry = dict.fromkeys(
                    ("current", "promoted"), params_mod.HIDDEN_VALUE
                )
        found[name] = entry
    return found


def _hidden(bound):
    if bound is None:
        return set()
    return {n for n, p in bound.template.parameters.items() if p.hidden}


def _dropped(old_env, new_env, hidden):
    """{section: {key: value}} the target loses; the values of its
    hidden parameters masked."""
    dropped = {}
    for section in _SECTIONS:
        old = old_env.get(section) or {}
        new = new_env.get(section) or {}
        if not isinstance(old, dict):
            continue
        lost = {
            k: params_mod.HIDDEN_VALUE
            if k in hidden and section in ("parameters", "parameter_defaults")
            else v
            for k, v in old.items()
            if not isinstance(new, dict) or k not in new
        }
        if lost:
            dropped[section] = lost
    return dropped


def _resources(target, goal, present, services):
    if target is None:
        names = {kind: [] for kind in stack_preview.CHANGE_KINDS}
        names["added"] = sorted(goal.resources)
        return names
    changes = stack_preview.update_changes(
        target, goal, present, records_by_name(target), services
    )
    return {
        kind: sorted(entry["resource_name"] for entry in entries)
        for kind, entries in changes.items()
    }
