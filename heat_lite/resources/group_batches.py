"""Batches of a ResourceGroup: which members change together, and in
what steps the group's nested stack is converged when a policy pauses
between batches.

Without a pause, batches are ordered inside one traversal of the nested
stack (each member of a batch depends on every member of the one
before). A pause is not a dependency, so with ``pause_time`` the group
converges its nested stack in steps instead, one step per batch: each
step's template gives the members of the batches done so far their new
definition and the others their old one (or leaves them out, when they
are new), and the resource polls (``PollDelay``) through the pause
between two steps; no worker thread waits.
"""

from heat_lite.common import exception, template_format

# The update_policy keys a group reads, with Heat's defaults.
POLICIES = {
    "batch_create": {"max_batch_size": 1, "pause_time": 0},
    "rolling_update": {
        "max_batch_size": 1,
        "min_in_service": 0,
        "pause_time": 0,
    },
}


def _number(value, path, cast):
    try:
        number = cast(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0:
        raise exception.StackValidationFailed(
            path=path, msg="must be a number >= 0"
        ) from None
    return number


def policy(update_policy, key):
    """The ``key`` policy of ``update_policy`` with defaults filled in, or
    None when the template has no such policy.

    :raises StackValidationFailed: for a value that is not a number >= 0.
    """
    given = (update_policy or {}).get(key)
    if not given:
        return None
    result = {}
    for name, default in POLICIES[key].items():
        value = given.get(name, default)
        cast = template_format.finite_float if name == "pause_time" else int
        result[name] = _number(
            value, "update_policy.%s.%s" % (key, name), cast
        )
    return result


def batch_size(count, rules):
    """How many members change at once under ``rules`` (0: all at once).

    ``min_in_service`` shrinks the batch so that at least that many of
    the ``count`` members stay untouched, but never below one member.
    """
    if not rules:
        return 0
    size = max(rules["max_batch_size"], 1)
    in_service = rules.get("min_in_service", 0)
    if in_service:
        size = max(1, min(size, count - in_service))
    return size


def chunks(names, size):
    """``names`` cut into consecutive batches of ``size`` (one if 0)."""
    if not size:
        return [list(names)] if names else []
    return [names[i : i + size] for i in range(0, len(names), size)]


def step_resources(final, old, batches, index):
    """The members of step ``index``: new definitions for the members of
    ``batches[:index + 1]``, old ones for the rest (new members not yet
    reached are left out; members gone from ``final`` are dropped)."""
    done = {name for batch in batches[: index + 1] for name in batch}
    resources = {}
    for name, definition in final.items():
        if name in done:
            resources[name] = definition
        elif name in old:
            resources[name] = old[name]
    return resources
