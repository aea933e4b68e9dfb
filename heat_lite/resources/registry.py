"""Resource types, loaded from the ``heat_lite.resources`` entry points."""

import threading

from stevedore import extension

from heat_lite.common import exception
from heat_lite.resources import base

NAMESPACE = "heat_lite.resources"
_LOCK = threading.Lock()
_TYPES = {}


def _on_load_failure(manager, entrypoint, exc):
    raise RuntimeError(
        "Resource plugin %s (%s) failed to load: %s"
        % (entrypoint.name, entrypoint.value, exc)
    ) from exc


def load():
    """Load every plugin once; a broken plugin raises RuntimeError."""
    with _LOCK:
        if _TYPES:
            return dict(_TYPES)
        mgr = extension.ExtensionManager(
            NAMESPACE,
            invoke_on_load=False,
            on_load_failure_callback=_on_load_failure,
        )
        for ext in mgr:
            if not (
                isinstance(ext.plugin, type)
                and issubclass(ext.plugin, base.Resource)
            ):
                raise RuntimeError(
                    "Resource plugin %s is not a Resource subclass" % ext.name
                )
            _TYPES[ext.name] = ext.plugin
        return dict(_TYPES)


def get_class(type_name):
    """Return the plugin class of ``type_name``.

    :raises StackValidationFailed: for an unknown type.
    """
    types = _TYPES or load()
    try:
        return types[type_name]
    except KeyError:
        raise exception.ResourceTypeUnavailable(type_name=type_name) from None


def type_names():
    return sorted(_TYPES or load())
