"""``[database] pool_pre_ping`` through SQLAlchemy's plugin hook.

oslo.db's ``create_engine`` always asks SQLAlchemy for ``pool_pre_ping``
(a round trip before every transaction) and takes no argument to change
it, nor does ``enginefacade.configure``. SQLAlchemy's public way to
change the arguments of an engine someone else creates is a
``CreateEnginePlugin`` named in the database URL: its
``handle_pool_kwargs`` sees the pool's arguments before the pool is made.
``session.get_engine`` names this plugin through oslo.db's
``connection_parameters`` (appended to the URL's query), with the
choice as a parameter the plugin removes from the URL again.
"""

from urllib import parse

from sqlalchemy.dialects import plugins
from sqlalchemy.engine import CreateEnginePlugin

NAME = "heat_lite_pool"
_PARAM = "heat_lite_pre_ping"


class PrePing(CreateEnginePlugin):
    """Sets the pool's ``pre_ping`` from the URL's ``heat_lite_pre_ping``."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        self.pre_ping = url.query.get(_PARAM, "1") == "1"

    def update_url(self, url):
        return url.difference_update_query([_PARAM])

    def handle_pool_kwargs(self, pool_cls, pool_args):
        pool_args["pre_ping"] = self.pre_ping


plugins.register(NAME, __name__, PrePing.__name__)


def query(pre_ping, extra=None):
    """The URL query naming the plugin (and ``extra``, the operator's own
    ``connection_parameters``, after it)."""
    params = parse.urlencode({"plugin": NAME, _PARAM: int(bool(pre_ping))})
    return params + "&" + extra if extra else params


def url(database_url, pre_ping):
    """``database_url`` with the plugin named in its query."""
    joiner = "&" if "?" in database_url else "?"
    return database_url + joiner + query(pre_ping)
