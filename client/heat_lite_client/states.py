"""The server's state vocabularies (``GET /v1/states.json``: every kind
of status, in display order, with its named groups and transitions),
read once per command instead of kept here as copies that drift.

``vocabulary(client, "rollout_target")`` is one of them as the server
serves it: ``{"states": [...], "groups": {...}, "transitions": {...}}``.
"""

from heatclient import exc
from heatclient.common import utils as heat_utils
from osc_lib import exceptions

PATH = "/v1/states.json"
# Where the document is kept on the command's client: the client (and
# its session) lives as long as one command.
_CACHE = "_heat_lite_states"


def _root(http):
    """The API's root URL, from the endpoint ``.../v1/<project>``."""
    endpoint = http.get_endpoint() or ""
    base = endpoint.rstrip("/")
    cut = base.rfind("/v1/")
    return base[:cut] if cut >= 0 else base


def document(client):
    """Every vocabulary, fetched once for this client (command).

    :raises CommandError: if the server does not serve them (older than
        this client).
    """
    found = getattr(client, _CACHE, None)
    if found is not None:
        return found
    http = client.http_client
    url = _root(http) + PATH
    try:
        response = http.get(url)
    except (exc.HTTPNotFound, exc.HTTPForbidden):
        raise exceptions.CommandError(
            "The heat_lite server at %s does not serve %s: it is older "
            "than this client. Upgrade the server, or use the "
            "heat-lite-client of its release." % (_root(http), PATH)
        ) from None
    found = heat_utils.get_response_body(response)
    setattr(client, _CACHE, found)
    return found


def vocabulary(client, name):
    """One vocabulary (``rollout``, ``rollout_target``, ``promotion``,
    ``verification``, ``snapshot``, ``stack``)."""
    return document(client)[name]
