"""Adopt: a new stack whose resources already exist (Heat's ADOPT).

A stack adopted from abandon data converges like a create with action
ADOPT. The planner prefills each new record with the ``resource_id``,
``resource_data`` and ``metadata`` of its entry in the data
(``planner.adopt_columns``); the worker then runs the plugin's ``handle_adopt``
instead of ``handle_create`` (``changes.Changes.adopt``). The default
``handle_adopt`` only insists on a physical ID, so a resource missing
from the data fails the adopt, as in Heat; a resource that owns a nested
stack adopts that stack from the entry's ``resources``.
"""

from heat_lite.common import exception
from heat_lite.engine.traversal.planner import ADOPT_NESTED_KEY

NESTED_KEY = ADOPT_NESTED_KEY


def inputs(data, template, params, files):
    """(template, parameters, files) of a create request, adopting from
    ``data`` (or not at all: None leaves them as they are).

    The data's template and files serve unless the request gives its
    own; the parameters of the data's environment are merged under the
    request's, as Heat does.

    :raises Invalid: for malformed adopt data.
    """
    if data is None:
        return template, params, files
    check_data(data)
    if template is None:
        template = data.get("template")
    if not isinstance(template, dict):
        raise exception.Invalid(message="Invalid adopt data: no template")
    env = data.get("environment")
    merged = (
        dict((env or {}).get("parameters") or {})
        if isinstance(env, dict)
        else {}
    )
    merged.update(params or {})
    data_files = data.get("files")
    merged_files = dict(data_files if isinstance(data_files, dict) else {})
    merged_files.update(files or {})
    return template, merged, merged_files


def check_data(data):
    """The ``resources`` map of abandon data, checked.

    :raises Invalid: if the data or an entry is malformed.
    """
    resources = data.get("resources", {})
    if not isinstance(resources, dict):
        raise exception.Invalid(
            message="Invalid adopt data: resources must be a map"
        )
    for name, entry in resources.items():
        _check_entry(name, entry)
    return resources


def _check_entry(name, entry):
    if not isinstance(entry, dict):
        raise exception.Invalid(
            message="Invalid adopt data for resource %s" % name
        )
    expected = {
        "resource_id": (str, type(None)),
        "resource_data": (dict, type(None)),
        "metadata": (dict, type(None)),
        "resources": (dict, type(None)),
    }
    for key, types in expected.items():
        if not isinstance(entry.get(key), types):
            raise exception.Invalid(
                message="Invalid adopt data for "
                "resource %s: bad %s" % (name, key)
            )
    if len(entry.get("resource_id") or "") > 255:
        raise exception.Invalid(
            message="Invalid adopt data for resource "
            "%s: resource_id too long" % name
        )
    for child, child_entry in (entry.get("resources") or {}).items():
        _check_entry(child, child_entry)


def resource_data(plugin):
    """What ``handle_adopt`` gets: the entry as the adopt data gave it."""
    data = plugin.data()
    nested = data.pop(NESTED_KEY, None)
    entry = {"resource_id": plugin.resource_id, "resource_data": data}
    if nested is not None:
        entry["resources"] = nested
    return entry
