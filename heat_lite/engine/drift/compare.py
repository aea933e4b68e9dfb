"""Compare what a record was converged to with what the cloud has.

Pure: no database, no plugin, no cloud. A resource's result is one of
``IN_SYNC``, ``MODIFIED`` (with each differing property's ``expected``
and ``actual``), ``DELETED`` or ``NOT_CHECKED`` (with a ``reason``).
"""

import json

IN_SYNC = "IN_SYNC"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
NOT_CHECKED = "NOT_CHECKED"
# A stack's overall status.
DRIFTED = "DRIFTED"
DETECTION_IN_PROGRESS = "DETECTION_IN_PROGRESS"
DETECTION_FAILED = "DETECTION_FAILED"
# The action of the stack event written when a stack becomes DRIFTED.
DRIFT = "DRIFT"
RESOURCE_STATUSES = (IN_SYNC, MODIFIED, DELETED, NOT_CHECKED)


def template_set(defn_properties, deprecated=None):
    """The property names a resource definition sets (deprecated names
    counted as the names that replaced them), or None when unknown."""
    if defn_properties is None:
        return None
    deprecated = deprecated or {}
    return {deprecated.get(k, k) for k in defn_properties}


def _canonical(value):
    """Lists of mappings compare as multisets (rules, pools: Neutron
    keeps no order); everything else as it is."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) for v in value)
    ):
        return sorted(json.dumps(v, sort_keys=True) for v in value)
    return value


def same(expected, actual):
    return _canonical(expected) == _canonical(actual)


def differences(stored, set_keys, live, expectations):
    """[{name, expected, actual}] of what drifted, by name.

    :param stored: the record's properties (what it was converged to).
    :param set_keys: the properties the template set (None: all stored
        ones; values the cloud filled in are then compared too).
    :param live: the plugin's ``live_state()``.
    :param expectations: the plugin's ``live_expectations(action)``:
        expected values of what it observes beyond its properties.
    """
    found = []
    for name in sorted(live):
        if name in expectations:
            expected = expectations[name]
        elif name in stored and (set_keys is None or name in set_keys):
            expected = stored[name]
        else:
            continue
        if not same(expected, live[name]):
            found.append(
                {"name": name, "expected": expected, "actual": live[name]}
            )
    return found


def rollup(entries):
    """The status of a stack (or of a resource owning a nested stack)
    from its resources' entries: DRIFTED if any was MODIFIED or
    DELETED, else IN_SYNC."""
    drifted = any(e["drift_status"] in (MODIFIED, DELETED) for e in entries)
    return DRIFTED if drifted else IN_SYNC


def counts(entries):
    """{resource status: how many entries have it}."""
    return {
        status: sum(1 for e in entries if e["drift_status"] == status)
        for status in RESOURCE_STATUSES
    }
