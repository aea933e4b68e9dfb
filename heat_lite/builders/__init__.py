"""Builders: turn the files of one commit into one image.

Plugins of the ``heat_lite.builders`` entry point namespace (setup.cfg),
loaded by name with stevedore; ``base`` says what a builder is. Nothing
here imports the API, the database, the engine or the resource plugins.
"""

from stevedore import driver, extension
from stevedore import exception as stevedore_exception

from heat_lite.common import exception

NAMESPACE = "heat_lite.builders"


class UnknownBuilder(exception.Invalid):
    msg_fmt = "Unknown builder %(name)r; known: %(known)s"


def names():
    """The names of the installed builders, sorted."""
    return sorted(extension.ExtensionManager(NAMESPACE).names())


def get_builder(name, conf):
    """Return the builder called ``name``, made with ``conf`` (the
    ``[apps]`` group).

    :raises UnknownBuilder:
    """
    try:
        manager = driver.DriverManager(
            NAMESPACE,
            name,
            invoke_on_load=True,
            invoke_args=(conf,),
            on_load_failure_callback=_reraise,
        )
    except stevedore_exception.NoMatches:
        raise UnknownBuilder(name=name, known=", ".join(names())) from None
    return manager.driver


def _reraise(manager, entrypoint, exc):
    # A builder that is installed but does not import is a broken
    # install: say so loudly instead of "unknown builder".
    raise exc
